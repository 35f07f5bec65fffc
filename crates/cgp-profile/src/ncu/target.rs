//! What ncu's argv needs of a target, as ncu spells it. The spec's `Target` converts into this
//! (the `From` impl lives in `profile::live`), so `ncu` does not import the spec.

/// The options of one target that reach ncu's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcuTarget<'a> {
    /// `--clock-control`: the spec's value when ncu locks the clocks, `none` when cgp-gate locks
    /// them through NVML or nobody may touch them.
    pub clock_control: &'static str,
    /// `--cache-control`: `all` or `none`.
    pub cache_control: &'static str,
    /// `--replay-mode`: `kernel`, `application`, `range` or `app-range`.
    pub replay_mode: &'static str,
    /// `--kernel-name` (`regex:...` or a function name), when the target filters kernels.
    pub kernel: Option<String>,
    /// `--launch-skip`.
    pub launch_skip: Option<u64>,
    /// `--launch-count`.
    pub launch_count: Option<u64>,
    /// `--nvtx-include` expressions.
    pub nvtx: &'a [String],
}
