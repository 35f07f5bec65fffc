//! `cgp-gate store ...` and the `--store`/`--branch` flags of the commands that push or read
//! runs: their clap arguments (kept apart from `args.rs`).
//!
//! `CGP_GATE_STORE` is read by the command layer, not through clap's `env`: clap would print
//! its value (the URL with its password) in `--help`.

use std::path::PathBuf;

use crate::commands::store::StoreOptions;

/// `--store URL` and `--branch NAME` of `check`, `ab`, `merge` and `baseline update`: where the
/// run is pushed.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PushArgs {
    /// Push the results to this store (sqlite:PATH or postgres://USER@HOST:PORT/DB); default
    /// CGP_GATE_STORE, else the spec's settings.store, else none (docs/store.md).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// The branch the run is stored under (default: the CI's variables, else git's).
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
}

impl From<PushArgs> for StoreOptions {
    fn from(a: PushArgs) -> Self {
        Self {
            store: a.store,
            branch: a.branch,
        }
    }
}

/// `--store URL`, `--branch NAME` and `--since DATE` of `history` and `changes`: read the runs
/// from a store instead of files.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReadArgs {
    /// Read the runs from this store instead of files (sqlite:PATH or postgres://...; with no
    /// files, CGP_GATE_STORE).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Only the runs of this branch (with a store).
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
    /// Only runs from this day (2026-03-01) or time (RFC 3339) on (with a store).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
}

impl From<ReadArgs> for crate::commands::store::ReadOptions {
    fn from(a: ReadArgs) -> Self {
        Self {
            store: StoreOptions {
                store: a.store,
                branch: a.branch,
            },
            since: a.since,
        }
    }
}

/// `cgp-gate store`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum StoreCommand {
    /// Create the store's tables, or bring an older schema to this cgp-gate's (also the steps
    /// that are never applied on their own).
    Migrate(StoreFlags),
    /// Store results files (`check --json`, `ab --json`, `merge --json`): each run once, each in
    /// one transaction; a file that is not results stores nothing.
    Push {
        #[command(flatten)]
        flags: StoreFlags,
        /// The results files.
        #[arg(required = true, value_name = "RESULTS_JSON")]
        files: Vec<PathBuf>,
    },
    /// Bring old history in: results files, or github-action-benchmark's data.js.
    Import {
        #[command(flatten)]
        flags: StoreFlags,
        /// github-action-benchmark's data.js (`window.BENCHMARK_DATA`): each commit a run.
        #[arg(long, value_name = "DATA_JS")]
        github_action_benchmark: Option<PathBuf>,
        /// Results files, oldest first.
        #[arg(value_name = "RESULTS_JSON")]
        files: Vec<PathBuf>,
    },
    /// List the stored runs, oldest first.
    Runs {
        #[command(flatten)]
        flags: StoreFlags,
        /// Only runs from this day (2026-03-01) or time on.
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
    },
    /// Write the stored rows for another system: `hud-v3`, JSON lines in the shape of PyTorch's
    /// `oss_ci_benchmark_v3` ClickHouse table (the HUD's dashboards).
    Export {
        #[command(flatten)]
        flags: StoreFlags,
        /// The format.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// Only runs from this day (2026-03-01) or time on.
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// The file to write (`-`: standard output, the default).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The repository (OWNER/NAME) of runs pushed without one (outside GitHub and GitLab CI).
        #[arg(long, value_name = "OWNER/NAME")]
        repo: Option<String>,
    },
}

/// `cgp-gate store export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// PyTorch's `oss_ci_benchmark_v3` rows, one JSON object a line.
    #[value(name = "hud-v3")]
    HudV3,
}

/// `--store` and `--branch` of `cgp-gate store ...`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StoreFlags {
    /// The store (sqlite:PATH or postgres://USER@HOST:PORT/DB); default CGP_GATE_STORE.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// push, import: the branch the runs are stored under (default: the CI's, else git's);
    /// runs, export: only this branch's runs.
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
}

impl From<&StoreFlags> for StoreOptions {
    fn from(a: &StoreFlags) -> Self {
        Self {
            store: a.store.clone(),
            branch: a.branch.clone(),
        }
    }
}

/// Run `cgp-gate store ...`.
///
/// # Errors
/// The command's.
pub(crate) fn run(
    cmd: StoreCommand,
    out: &mut dyn std::io::Write,
) -> crate::foundation::error::Result<crate::foundation::exit_codes::Exit> {
    use crate::commands::store::cmd;
    match cmd {
        StoreCommand::Migrate(f) => cmd::migrate(&(&f).into(), out),
        StoreCommand::Push { flags, files } => cmd::push(&(&flags).into(), &files, out),
        StoreCommand::Import {
            flags,
            github_action_benchmark,
            files,
        } => cmd::import(&(&flags).into(), github_action_benchmark.as_deref(), &files, out),
        StoreCommand::Runs { flags, since } => cmd::runs(&(&flags).into(), since.as_deref(), out),
        StoreCommand::Export {
            flags,
            format: ExportFormat::HudV3,
            since,
            out: file,
            repo,
        } => cmd::export(&(&flags).into(), since.as_deref(), file.as_deref(), repo, out),
    }
}
