//! What one run of a target asks for: the application's argv for a size, and the ncu metrics.

use crate::spec::{DERIVED_PREFIX, Explain, Size, Target};

/// The application argv for one size.
///
/// # Errors
/// A placeholder without a value (impossible after the spec loaded).
pub fn app_argv(target: &Target, size: &Size) -> Result<Vec<String>, String> {
    crate::spec::render_command(&target.command, size)
}

/// Duration is needed by every derived metric.
pub const DURATION_METRIC: &str = "gpu__time_duration.sum";

/// `target` as measured when its explanatory counters are wanted: `explain: remeasure` becomes
/// `explain: true` (for `baseline update`, a re-measurement, or the explain pass of `check`).
pub fn explaining(target: &Target) -> Target {
    let mut t = target.clone();
    if t.explain == Explain::Remeasure {
        t.explain = Explain::Always;
    }
    t
}

/// The ncu target that measures the why of a `profiler: cupti` target with `explain:` set
/// (docs/cupti.md): the same program, sizes, filter and metrics, profiled once by ncu with the
/// explanatory counters. `None` for any other target.
pub fn ncu_for_why(target: &Target) -> Option<Target> {
    let why_by = target.profiler.why_by()?;
    if target.explain == Explain::Off {
        return None;
    }
    let mut t = target.clone();
    t.profiler = why_by;
    t.explain = Explain::Always;
    t.libcupti = None;
    t.repetitions = 1;
    // CUPTI did not lock clocks; ncu would (its default): measure the counters as CUPTI ran.
    if t.clocks == crate::spec::ClockSetting::Ncu {
        t.clocks = crate::spec::ClockSetting::None;
    }
    Some(t)
}

/// The ncu metrics to collect for a target: the spec's metrics (derived ones excluded), plus the
/// duration when a derived metric needs it, plus the explanatory counters of `explain: true`
/// (`why::COLLECT`; gated only where the spec names them). Sorted and deduplicated so argv is stable.
pub fn ncu_metrics(target: &Target) -> Vec<String> {
    let mut m: Vec<String> = target
        .metrics
        .iter()
        .filter(|m| !m.name.starts_with(DERIVED_PREFIX))
        .map(|m| m.name.clone())
        .collect();
    if target.metrics.iter().any(|m| m.name.starts_with(DERIVED_PREFIX)) {
        m.push(DURATION_METRIC.to_owned());
    }
    if target.explain == Explain::Always {
        m.extend(crate::measured::why::COLLECT.iter().map(|c| (*c).to_owned()));
    }
    m.sort();
    m.dedup();
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(extra: &str) -> Target {
        let text = format!(
            "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n      launch__registers_per_thread: exact\n{extra}"
        );
        crate::spec::load_str(&text, std::path::Path::new("cgp-gate.yaml"))
            .unwrap()
            .targets
            .remove(0)
    }

    #[test]
    fn explain_adds_the_explanatory_counters_once() {
        assert_eq!(
            ncu_metrics(&target("")),
            ["gpu__time_duration.sum", "launch__registers_per_thread"]
        );
        let m = ncu_metrics(&target("    explain: true\n"));
        // `remeasure`: not in a first pass; as `true` once explaining.
        let later = target("    explain: remeasure\n");
        assert_eq!(ncu_metrics(&later).len(), 2);
        assert_eq!(ncu_metrics(&explaining(&later)), m);
        for c in crate::measured::why::COLLECT {
            assert_eq!(m.iter().filter(|x| x == c).count(), 1, "{c}");
            assert!(crate::measured::why::is_explanatory(c), "{c} is read by the why");
        }
        assert!(m.contains(&"gpu__time_duration.sum".to_owned()));
        // launch__registers_per_thread is both gated and explanatory: collected once.
        assert_eq!(m.len(), crate::measured::why::COLLECT.len() + 1);
    }
}
