//! The validated spec: what the rest of cgp-gate works from. No I/O here.
//!
//! `spec::load` turns `cgp-gate.yaml` into these types, or into an error naming file, line and
//! column. Every field has its final value: defaults are applied, placeholders are checked.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The only spec schema version this build reads.
pub const SPEC_VERSION: u32 = 1;

/// A loaded, validated spec.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Where it was read from (for messages and relative `cwd`).
    pub path: PathBuf,
    /// SHA-256 of the file's bytes, hex; recordings and results carry it.
    pub hash: String,
    pub settings: Settings,
    pub targets: Vec<Target>,
}

/// Run-wide settings (`settings:` in the spec), with their defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Run-wide false-alarm rate, controlled over all judged rows (Holm).
    pub alpha: f64,
    /// Confidence level of the intervals shown.
    pub confidence: f64,
    /// Baseline generations kept per metric for trends.
    pub history: usize,
    /// Fingerprint fields that must match for a baseline to be compared.
    pub fingerprint_fields: Vec<String>,
    /// A repetition whose SM clock fell under this fraction of the locked clock is re-run.
    pub min_clock_fraction: f64,
    /// How many times a throttled repetition is re-run before it is kept and marked.
    pub max_throttle_reruns: u32,
    /// `job_spread`: the between-job spread (log scale) assumed before the baseline history says
    /// more; `None`: the default fitted to the H100 data (`stats::jobspread::DEFAULT_PRIOR`).
    pub job_spread: Option<f64>,
    /// `job_spread_df`: the degrees of freedom of the evidence behind `job_spread` (what
    /// `calibrate --baselines` prints with it); `None`: the default prior's
    /// (`stats::jobspread::PRIOR_DF`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_spread_df: Option<f64>,
    /// `build`: the shell command `bisect` and `check --base` run in a commit's worktree (in the
    /// spec's folder there) before measuring it; a bisect commit whose build fails is skipped, a
    /// base that does not build fails `check --base`. `None`: nothing to build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// `confirm`: which rows `check --base` measures again, paired with the base commit's build
    /// (docs/confirm.md); `--confirm` replaces it.
    #[serde(default)]
    pub confirm: ConfirmMode,
    /// `store`: the results store every command that writes or reads runs uses when neither
    /// `--store` nor `CGP_GATE_STORE` names one (`sqlite:PATH`, or a PostgreSQL URL without a
    /// password: a spec is committed; docs/store.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

/// Which rows `check --base` confirms against the base commit's build (`settings.confirm`,
/// `--confirm`; docs/confirm.md): the rows the stored baseline left doubtful (inconclusive or a
/// regression), or every row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmMode {
    /// Inconclusive rows and regressions; a pass or an improvement against the stored baseline
    /// is final.
    #[default]
    Doubtful,
    /// Every compared row: the paired verdict decides each, the stored baseline's is context.
    All,
}

impl ConfirmMode {
    /// Every mode, as the spec and the flag spell them.
    pub const ALL: [Self; 2] = [Self::Doubtful, Self::All];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Doubtful => "doubtful",
            Self::All => "all",
        }
    }

    /// The mode a word names (`doubtful`, `all`).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == text.trim())
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            alpha: 0.01,
            confidence: 0.95,
            history: 10,
            fingerprint_fields: crate::gpu::fingerprint::DEFAULT_KEY_FIELDS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            min_clock_fraction: 0.9,
            max_throttle_reruns: 2,
            job_spread: None,
            job_spread_df: None,
            build: None,
            confirm: ConfirmMode::Doubtful,
            store: None,
        }
    }
}

/// What the GPU layer needs of the settings: when a repetition is throttled, how often to re-run it.
impl From<&Settings> for crate::gpu::ThrottlePolicy {
    fn from(s: &Settings) -> Self {
        Self {
            min_clock_fraction: s.min_clock_fraction,
            max_reruns: s.max_throttle_reruns,
        }
    }
}

/// What a fingerprint records of the profiler settings.
impl From<&Profiling> for crate::gpu::fingerprint::ProfilerControls {
    fn from(p: &Profiling) -> Self {
        Self {
            clock_control: p.clock_control.as_str(),
            cache_control: p.cache_control.as_str(),
        }
    }
}

impl Spec {
    /// The directory relative paths in the spec are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }
}

/// One benchmark program and what to measure in it.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    /// argv template; `{param}` placeholders are filled from each size.
    pub command: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
    /// Variables of cgp-gate's own environment passed to the program although they look like
    /// credentials (`env_passthrough`; every other credential is removed).
    pub env_passthrough: Vec<String>,
    pub kernel: Option<KernelFilter>,
    /// NVTX include expressions (ORed by ncu).
    pub nvtx: Vec<String>,
    pub launch_skip: Option<u64>,
    pub launch_count: Option<u64>,
    /// Expanded sizes, in spec order; never empty (a target without parameters has one empty size).
    pub sizes: Vec<Size>,
    /// Metrics to collect and judge, in spec order.
    pub metrics: Vec<MetricSpec>,
    /// Repetitions per size (separate ncu runs).
    pub repetitions: u32,
    /// Upper bound for re-measurement of doubtful rows.
    pub max_repetitions: u32,
    /// Repetitions `baseline update` stores (>= `repetitions`); a recording with fewer gives
    /// what it has.
    pub baseline_repetitions: u32,
    /// Launches of each kernel every run drops at its start (`warmup:`, default 1): the first
    /// launch of a process is a warm-up outlier (+3-7 % on an H100). Applies only to runs that
    /// hold at least 3 launches of that kernel.
    pub warmup: u32,
    /// Wall-clock limit for one ncu run.
    pub timeout: Duration,
    pub profiling: Profiling,
    /// Who locks the GPU clocks, and to what.
    pub clocks: ClockSetting,
    /// Work per launch, as an expression over size parameters (`2*m*n*k`), for derived metrics.
    pub flops: Option<String>,
    /// Bytes moved per launch, as an expression over size parameters.
    pub bytes: Option<String>,
    /// Which profiler measures this target (`profiler:`; ncu unless set).
    pub profiler: ProfilerKind,
    /// `libcupti:` of a `profiler: cupti` target: the libcupti to load (resolved against the
    /// spec's directory); `None`: searched for (`cupti::locate`).
    pub libcupti: Option<PathBuf>,
    /// Kernel categories of an `nsys` target (`categories:`): the user's rules, tried before
    /// the defaults. `None`: the defaults alone.
    pub categories: Option<super::CategoryRules>,
    /// Baseline rows of this target that the run should have measured and did not (a kernel that
    /// disappeared or was renamed) do not fail the gate (`allow_missing: true`).
    pub allow_missing: bool,
    /// When to collect the counters that explain a time change (`why::COLLECT`; `explain:`,
    /// docs/why.md says what each choice costs).
    pub explain: Explain,
    /// Files whose SASS the cache hashes (`sass:`, resolved against the spec's directory);
    /// empty: the executable and the shared libraries it names (docs/sass-cache.md).
    pub sass: Vec<PathBuf>,
    /// `kernels:`: one row per kernel (`each`, the default) or one row per operation, the time of
    /// every selected kernel summed per iteration (`sum`; docs/spec.md, "Operation rows").
    pub kernels: KernelMode,
}

/// `kernels:` of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KernelMode {
    /// A row per kernel (and launch configuration).
    #[default]
    Each,
    /// One row per target x size x metric: the selected kernels' values summed per iteration.
    Sum,
}

/// The kernel name of an operation row (`kernels: sum`): the same whichever kernels ran, so the
/// row meets its baseline when a library switches kernels. The kernels behind it are the
/// series' `configs` (`KERNEL grid (..) block (..)`).
pub const SUM_KERNEL: &str = "(sum of selected kernels)";

/// Why a metric cannot be summed over the kernels of an operation row, or `None` when it can:
/// `.sum` counters and times add up; registers, occupancy, percentages, rates and averages do
/// not. Derived metrics (`cgp__*`) are computed from the row's summed time and work.
pub fn not_summable(name: &str) -> Option<&'static str> {
    if name.starts_with(DERIVED_PREFIX) {
        return None;
    }
    if name.starts_with("launch__") || name.contains("occupancy") {
        return Some("a launch attribute (registers, block size, occupancy) of each kernel");
    }
    if name.contains("pct") {
        return Some("a percentage of peak");
    }
    if name.contains("per_second") {
        return Some("a rate");
    }
    if name.ends_with(".sum") {
        return None;
    }
    Some("not a `.sum` counter (averages, minima, maxima and ratios do not add up)")
}

/// `explain:` of a target: when `check` collects the counters that say why a time changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Explain {
    /// `false` (the default): only the spec's own metrics explain a change.
    #[default]
    Off,
    /// `true`: in every run, baseline and check.
    Always,
    /// `remeasure`: in `baseline update`, and in `check` only when re-measuring doubtful rows or
    /// for rows judged a regression or improvement; a run where nothing changed pays nothing.
    Remeasure,
}

/// The metrics a `profiler: cupti` target measures (docs/cupti.md): the kernel's duration (end
/// minus start of CUPTI's kernel record) and its launch configuration, under ncu's names so specs,
/// thresholds and reports read alike. Derived metrics (`cgp__*`) come from the duration.
pub const CUPTI_METRICS: &[&str] = &[
    "gpu__time_duration.sum",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
];

/// `profiler:` of a target: the type is the measured data's (`measured::profiler`), so the
/// fingerprint names its profiler by it too.
pub use crate::measured::profiler::ProfilerKind;

/// How the spec names the kernels to profile: a regex matches the demangled name, an exact name
/// the function name or the whole demangled name (`profile::filter`, docs/spec.md).
#[derive(Debug, Clone)]
pub enum KernelFilter {
    Exact(String),
    Regex(regex::Regex),
}

impl KernelFilter {
    /// The value for ncu's `-k` option.
    pub fn ncu_arg(&self) -> String {
        match self {
            Self::Exact(s) => s.clone(),
            Self::Regex(r) => format!("regex:{}", r.as_str()),
        }
    }
}

impl fmt::Display for KernelFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.ncu_arg())
    }
}

/// One point of a sweep: parameter name -> value, in spec order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Size {
    pub params: Vec<(String, String)>,
}

impl Size {
    /// The canonical key: `key=value` pairs in spec order joined by `,`, or `default` when empty.
    /// Also the recording's directory name for this size.
    pub fn key(&self) -> String {
        if self.params.is_empty() {
            return "default".to_owned();
        }
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Profiler settings, always passed to ncu explicitly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profiling {
    pub clock_control: ClockControl,
    pub cache_control: CacheControl,
    pub replay_mode: ReplayMode,
}

impl Default for Profiling {
    fn default() -> Self {
        Self {
            clock_control: ClockControl::Base,
            cache_control: CacheControl::All,
            replay_mode: ReplayMode::Kernel,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockControl {
    Base,
    None,
}

impl ClockControl {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Base => "base",
            Self::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheControl {
    All,
    None,
}

impl CacheControl {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayMode {
    Kernel,
    Application,
    Range,
    AppRange,
}

impl ReplayMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kernel => "kernel",
            Self::Application => "application",
            Self::Range => "range",
            Self::AppRange => "app-range",
        }
    }
}

/// Clock locking (`clocks:` in the spec): defined where the clocks are locked.
pub use crate::gpu::clock_setting::ClockSetting;

/// Prefix of metrics cgp-gate derives itself (never passed to ncu).
pub const DERIVED_PREFIX: &str = "cgp__";

/// Derived metrics, computed from `flops:`/`bytes:` and `gpu__time_duration.sum` (by
/// `gpu::derive`, which owns the list).
pub use crate::gpu::roofline::DERIVED_METRICS;

/// Derived metrics that need the GPU's peak figures (`docs/gpu.md` lists the GPUs that have them).
pub const PEAK_METRICS: &[&str] = &["cgp__flops.pct_of_peak", "cgp__dram.pct_of_peak"];

/// A metric to collect and how to judge it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSpec {
    /// ncu metric name, e.g. `gpu__time_duration.sum`.
    pub name: String,
    pub threshold: Threshold,
}

pub use crate::foundation::threshold::{Direction, Threshold, ThresholdKind};

/// Default direction of a known metric, or `None` when the spec must say.
pub fn default_direction(metric: &str) -> Option<Direction> {
    let m = metric;
    if m.contains(".pct_of_peak")
        || m.ends_with(".per_second")
        || m.contains("hit_rate")
        || m.contains("warps_active")
    {
        return Some(Direction::Higher);
    }
    let lower_markers = [
        "time_duration",
        "duration",
        "bytes",
        "cycles",
        "inst_executed",
        "instructions",
        "registers",
        "sectors",
        "requests",
        "wavefronts",
        "__inst",
        "shared_mem",
        "spill",
    ];
    if lower_markers.iter().any(|k| m.contains(k)) {
        return Some(Direction::Lower);
    }
    None
}

/// The statistical settings `check` judges with: the spec's `settings:`, the remaining fields at
/// their defaults. `check`, `ab`, `calibrate` and `examples/power.rs` judge with the same.
pub fn stats_config(settings: &Settings) -> crate::stats::Config {
    let default = crate::stats::Config::default();
    crate::stats::Config {
        alpha: settings.alpha,
        confidence: settings.confidence,
        job_prior: crate::stats::jobspread::Prior {
            spread: settings.job_spread.unwrap_or(default.job_prior.spread),
            df: settings.job_spread_df.unwrap_or(default.job_prior.df),
        },
        ..default
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_key_keeps_spec_order() {
        let s = Size {
            params: vec![("n".into(), "4096".into()), ("m".into(), "128".into())],
        };
        assert_eq!(s.key(), "n=4096,m=128");
        assert_eq!(Size::default().key(), "default");
    }

    #[test]
    fn known_metrics_have_directions() {
        assert_eq!(
            default_direction("gpu__time_duration.sum"),
            Some(Direction::Lower)
        );
        assert_eq!(default_direction("dram__bytes_read.sum"), Some(Direction::Lower));
        assert_eq!(
            default_direction("launch__registers_per_thread"),
            Some(Direction::Lower)
        );
        assert_eq!(
            default_direction("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            Some(Direction::Higher)
        );
        assert_eq!(
            default_direction("dram__bytes.sum.per_second"),
            Some(Direction::Higher)
        );
        assert_eq!(default_direction("launch__func_cache_config"), None);
    }
}
