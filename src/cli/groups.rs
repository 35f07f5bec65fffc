//! Flag groups that several subcommands declare alike, each declared once and flattened
//! (`#[command(flatten)]`) where it is used: the same flag, the same help text. The larger groups
//! (`UiArgs`, `SourceArgs`, `ShardArgs`, `ReportFlagsArgs`) are in `args.rs`, the store's in
//! `store.rs`.

use std::path::PathBuf;

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
