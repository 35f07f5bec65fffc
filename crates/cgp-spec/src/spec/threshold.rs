//! Metric names and the thresholds they are judged by (`metrics:` in a target).

use crate::foundation::units::Quantity;

use super::decode::{Ctx, Fields, Result, describe, did_you_mean, list};
use super::model::{DERIVED_METRICS, DERIVED_PREFIX, Direction, Threshold, ThresholdKind, default_direction};
use super::yaml::{Kind, Node, Scalar, Typed};

/// Counter units whose metrics need a rollup (`.sum`, `.avg`, ...): their base names alone
/// cannot be evaluated by ncu.
const COUNTER_UNITS: &[&str] = &["sm", "smsp", "dram", "lts", "l1tex", "gpu", "gpc"];

/// Metric names cgp-gate knows without asking ncu: the common Nsight Compute metrics (ncu
/// 2022.3+ names for sm_70 and newer), the counters the why collects and the derived metrics.
/// A name that is not here and is close to one that is gets a "did you mean" (ncu's own list,
/// `ncu --query-metrics`, is used instead where ncu is installed: `cgp-gate validate`).
pub const KNOWN_METRICS: &[&str] = &[
    "gpu__time_duration.sum",
    "gpu__time_duration.avg",
    "gpu__time_duration.max",
    "gpu__time_duration.min",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__bytes.sum.per_second",
    "dram__bytes_read.sum.per_second",
    "dram__bytes_write.sum.per_second",
    "lts__t_bytes.sum",
    "lts__t_sectors.sum",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_bytes.sum",
    "l1tex__t_sectors.sum",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    "launch__waves_per_multiprocessor",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__cycles_elapsed.avg",
    "sm__cycles_active.avg",
    "sm__inst_executed.sum",
    "smsp__inst_executed.sum",
    "smsp__sass_inst_executed.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
];

/// The known metric names closest to `name` (at most 3, best first): for a typo.
pub fn nearest_known_metrics(name: &str) -> Vec<&'static str> {
    let mut scored: Vec<(f64, &'static str)> = KNOWN_METRICS
        .iter()
        .chain(DERIVED_METRICS)
        .filter(|k| **k != name)
        .map(|k| (strsim::jaro_winkler(name, k), *k))
        .filter(|(s, _)| *s >= 0.93)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(3).map(|(_, k)| k).collect()
}

/// A bare number below 1 is read as a fraction (0.03 = 3%) only where the other reading, a
/// percentage of the number itself, is below what any GPU timing resolves: the H100 recordings
/// of ../shared/gpu/h100-2026-11-24 have a run-to-run spread of 0.16% at best (docs/spec.md).
/// Between this and 1 both readings are thresholds someone could mean, and the spec must say.
pub const FRACTION_BELOW: f64 = 0.2;

/// What a metric needs from the target to be derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Needs {
    pub flops: bool,
    pub bytes: bool,
}

/// Check that `name` can be a single ncu metric (or a known derived one).
///
/// # Errors
/// A message saying what is wrong and an optional help line.
pub(crate) fn check_metric_name(name: &str) -> std::result::Result<Option<Needs>, (String, String)> {
    for prefix in ["breakdown:", "regex:", "group:", "pmsampling:"] {
        if name.starts_with(prefix) {
            return Err((
                format!("metric `{name}` uses the `{prefix}` form, which does not give one value per launch"),
                "list each metric by its full name, e.g. `dram__throughput.avg.pct_of_peak_sustained_elapsed`".to_owned(),
            ));
        }
    }
    if name.starts_with(DERIVED_PREFIX) {
        return derived_needs(name).map(Some).ok_or_else(|| {
            let guess = derived_suggestion(name)
                .map(|g| format!("did you mean `{g}`? "))
                .unwrap_or_default();
            (
                format!("unknown derived metric `{name}`"),
                format!("{guess}derived metrics are {}", list(DERIVED_METRICS)),
            )
        });
    }
    if name.chars().any(|c| c.is_ascii_uppercase()) {
        return Err((
            format!("metric `{name}` has uppercase letters"),
            format!("ncu metric names are lowercase: `{}`", name.to_ascii_lowercase()),
        ));
    }
    let shape_help = "an ncu metric name is `unit__counter` with optional `.rollup` and `.submetric` parts, of lowercase letters, digits and `_`, e.g. `gpu__time_duration.sum` or `launch__registers_per_thread`";
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == '.'))
    {
        return Err((
            format!("metric `{name}` contains `{bad}`, which cannot appear in an ncu metric name"),
            shape_help.to_owned(),
        ));
    }
    let Some((unit, rest)) = name.split_once("__") else {
        return Err((
            format!("`{name}` is not an ncu metric name: it has no `__` between unit and counter"),
            shape_help.to_owned(),
        ));
    };
    let mut parts = rest.split('.');
    let counter = parts.next().unwrap_or("");
    if unit.is_empty() || unit.contains('.') || counter.is_empty() || parts.any(str::is_empty) {
        return Err((
            format!("`{name}` is not an ncu metric name"),
            shape_help.to_owned(),
        ));
    }
    if COUNTER_UNITS.contains(&unit) && !rest.contains('.') {
        return Err((
            format!("`{name}` is a base metric name, which ncu cannot evaluate"),
            format!(
                "add a rollup, e.g. `{name}.sum`, `{name}.avg` or `{name}.max` (throughputs: `{name}.avg.pct_of_peak_sustained_elapsed`)"
            ),
        ));
    }
    Ok(None)
}

/// The base unit ncu reports a metric in, where its name says it: `gpu__time_duration.*` is
/// `ns`, `dram__bytes.*` is `byte`, `*.pct_of_peak*` is `%`, `*__bytes.*.per_second` is
/// `byte/second` (units as `units::normalise` names them). `None` where the name does not say.
pub(crate) fn known_unit(metric: &str) -> Option<&'static str> {
    let base = metric.split('.').next().unwrap_or(metric);
    if metric.contains(".pct_of_peak") {
        return Some("%");
    }
    let per_second = metric.ends_with(".per_second");
    match base {
        "gpu__time_duration" => (!per_second).then_some("ns"),
        "dram__bytes" | "dram__bytes_read" | "dram__bytes_write" | "lts__t_bytes" | "l1tex__t_bytes" => {
            Some(if per_second { "byte/second" } else { "byte" })
        }
        _ => None,
    }
}

fn derived_needs(name: &str) -> Option<Needs> {
    let needs = match name {
        "cgp__achieved_flops.per_second" | "cgp__flops.pct_of_peak" => Needs {
            flops: true,
            bytes: false,
        },
        "cgp__achieved_bytes.per_second" | "cgp__dram.pct_of_peak" => Needs {
            flops: false,
            bytes: true,
        },
        "cgp__arithmetic_intensity" => Needs {
            flops: true,
            bytes: true,
        },
        _ => return None,
    };
    DERIVED_METRICS.contains(&name).then_some(needs)
}

/// The direction a metric defaults to, including the derived ones, which are all "higher is
/// better": with the work fixed by the size, more flop/s, more byte/s and more flop per byte
/// moved all mean a faster kernel.
pub(crate) fn metric_direction(name: &str) -> Option<Direction> {
    // nsys metrics are times and counts: less is better.
    if super::categories::is_nsys_metric_name(name) {
        return Some(Direction::Lower);
    }
    if name.starts_with(DERIVED_PREFIX) {
        return Some(Direction::Higher);
    }
    default_direction(name)
}

const FORMS: &str = "a threshold is `\"3%\"`, `exact`, `{min: X}`, `{max: X}`, or a mapping like `{relative: \"3%\", direction: lower, min_effect: \"500ns\"}`";
pub(crate) const MAP_KEYS: &[&str] = &["relative", "exact", "min", "max", "direction", "min_effect"];

/// Decode one metric's threshold.
pub(crate) fn threshold(ctx: &Ctx<'_>, metric: &str, node: &Node) -> Result<Threshold> {
    threshold_or(ctx, metric, node, None)
}

/// [`threshold`], with the direction `fallback` for a metric whose name does not say it to
/// cgp-gate's own list (a harness's metrics: `real_time`, `bytes_per_second`).
pub(crate) fn threshold_or(
    ctx: &Ctx<'_>,
    metric: &str,
    node: &Node,
    fallback: Option<Direction>,
) -> Result<Threshold> {
    let what = format!("the threshold of `{metric}`");
    let (kind, direction, min_effect) = match &node.kind {
        Kind::Scalar(s) => {
            let kind = scalar_rule(ctx, node, s, &what)?;
            (kind, None, None)
        }
        Kind::Map(_) => {
            let f = ctx.fields(node, &what, MAP_KEYS)?;
            let kind = map_rule(ctx, node, &f, &what)?;
            let direction = match f.get("direction") {
                Some(n) => Some(
                    match ctx.choice(n, &format!("`direction` in {what}"), &["lower", "higher"])? {
                        "lower" => Direction::Lower,
                        _ => Direction::Higher,
                    },
                ),
                None => None,
            };
            let min_effect = match f.get("min_effect") {
                Some(n) => {
                    let q = min_effect(ctx, n, &what)?;
                    if let Some(unit) = known_unit(metric)
                        && !q.unit.is_empty()
                        && q.unit != unit
                    {
                        return Err(ctx
                            .err(
                                n,
                                format!("`min_effect` {q} in {what} is in `{}`, but ncu measures `{metric}` in `{unit}`", q.unit),
                            )
                            .help(format!("give min_effect in `{unit}` (e.g. `500ns` for a duration, `1MB` for bytes)")));
                    }
                    Some(q)
                }
                None => None,
            };
            (kind, direction, min_effect)
        }
        Kind::Seq(_) => {
            return Err(ctx.err(node, format!("{what} cannot be a list")).help(FORMS));
        }
    };
    let direction = match direction.or(fallback).or_else(|| metric_direction(metric)) {
        Some(d) => d,
        // A bound says by itself which side is bad.
        None => match kind {
            ThresholdKind::Min { .. } => Direction::Higher,
            ThresholdKind::Max { .. } => Direction::Lower,
            ThresholdKind::Relative { .. } | ThresholdKind::Exact => {
                // A typo of a known name is far likelier than a metric nobody told us about.
                let near = nearest_known_metrics(metric);
                if let Some(best) = near.first() {
                    return Err(ctx
                        .err(node, format!("unknown metric `{metric}`"))
                        .help(format!(
                            "did you mean `{best}`? (if `{metric}` is right, give its direction: `{metric}: {{relative: \"3%\", direction: lower}}`)"
                        )));
                }
                return Err(ctx
                    .err(node, format!("cgp-gate does not know whether lower or higher is better for `{metric}`"))
                    .help(format!(
                        "write the threshold as a mapping with a direction, e.g. `{metric}: {{relative: \"3%\", direction: lower}}`"
                    )));
            }
        },
    };
    Ok(Threshold {
        kind,
        direction,
        min_effect,
    })
}

/// The rule of a threshold written as one scalar: `exact`, `"3%"` or a fraction below 0.01.
fn scalar_rule(ctx: &Ctx<'_>, node: &Node, s: &Scalar, what: &str) -> Result<ThresholdKind> {
    Ok(match s.typed() {
        Typed::Str("exact") => ThresholdKind::Exact,
        Typed::Str(t) if t.trim_end().ends_with('%') => relative(ctx, node, t, what)?,
        // 0.03: 3% (0.03% is below what a GPU timing resolves).
        Typed::Float(x) if x > 0.0 && x < FRACTION_BELOW => ThresholdKind::Relative { fraction: x },
        Typed::Float(x) if x > 0.0 && x < 1.0 => {
            let pct = crate::foundation::units::format_number(x * 100.0);
            return Err(ctx
                .err(node, format!("{what} is a bare number `{}`: {pct}% or {}%?", s.text, s.text))
                .help(format!(
                    "write `\"{pct}%\"` if {} is a fraction, `\"{}%\"` if it is a percentage, or `{{max: {}}}` for a bound",
                    s.text, s.text, s.text
                )));
        }
        Typed::Int(_) | Typed::Float(_) => {
            return Err(ctx
                .err(node, format!("{what} is a bare number `{}`", s.text))
                .help(format!(
                    "write a percentage like `\"{}%\"` for a relative threshold, or `{{max: {}}}` for a bound",
                    s.text, s.text
                )));
        }
        _ => {
            return Err(ctx
                .err(node, format!("{what} cannot be {}", describe(node)))
                .help(FORMS));
        }
    })
}

/// The one rule of a threshold written as a mapping: `relative`, `exact`, `min` or `max`.
fn map_rule(ctx: &Ctx<'_>, node: &Node, f: &Fields<'_>, what: &str) -> Result<ThresholdKind> {
    let rules: Vec<&str> = ["relative", "exact", "min", "max"]
        .into_iter()
        .filter(|k| f.get(k).is_some())
        .collect();
    Ok(match rules.as_slice() {
        ["relative"] => {
            let n = f.get("relative").unwrap_or(node);
            let t = ctx.text(n, &format!("`relative` in {what}"))?;
            relative(ctx, n, t, what)?
        }
        ["exact"] => {
            let n = f.get("exact").unwrap_or(node);
            match &n.kind {
                Kind::Scalar(s) if s.typed() == Typed::Bool(true) => ThresholdKind::Exact,
                _ => {
                    return Err(ctx
                        .err(
                            n,
                            format!("`exact` in {what} must be `true`, found {}", describe(n)),
                        )
                        .help("to judge by a relative change instead, use `relative: \"3%\"`"));
                }
            }
        }
        ["min"] => ThresholdKind::Min {
            value: bound(ctx, f.get("min").unwrap_or(node), "min", what)?,
        },
        ["max"] => ThresholdKind::Max {
            value: bound(ctx, f.get("max").unwrap_or(node), "max", what)?,
        },
        [] => {
            return Err(ctx
                .err(node, format!("{what} has no rule"))
                .help("add one of `relative`, `exact`, `min` or `max`"));
        }
        several => {
            let at = f.key_node(several[1]).unwrap_or(node);
            return Err(ctx
                .err(at, format!("{what} has more than one rule: {}", list(several)))
                .help(
                    "use exactly one of `relative`, `exact`, `min` or `max`; list the metric once per target",
                ));
        }
    })
}

fn relative(ctx: &Ctx<'_>, node: &Node, text: &str, what: &str) -> Result<ThresholdKind> {
    let Some(num) = text.trim().strip_suffix('%') else {
        return Err(ctx
            .err(
                node,
                format!("relative threshold `{text}` in {what} is not a percentage"),
            )
            .help("write it like `\"3%\"`"));
    };
    match num.trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p > 0.0 => Ok(ThresholdKind::Relative { fraction: p / 100.0 }),
        Ok(p) if !p.is_finite() => Err(ctx
            .err(
                node,
                format!("relative threshold `{text}` in {what} is not a finite percentage"),
            )
            .help("write a percentage like `\"3%\"`; a threshold that large would pass any change")),
        Ok(_) => Err(ctx
            .err(
                node,
                format!("relative threshold `{text}` in {what} must be greater than 0%"),
            )
            .help("to refuse any change, use `exact`")),
        Err(_) => Err(ctx
            .err(
                node,
                format!("relative threshold `{text}` in {what} is not a percentage"),
            )
            .help("write it like `\"3%\"` or `\"0.5%\"`")),
    }
}

/// A number in base units, or a quantity string.
fn bound(ctx: &Ctx<'_>, node: &Node, key: &str, what: &str) -> Result<f64> {
    if let Kind::Scalar(s) = &node.kind {
        match s.typed() {
            #[expect(clippy::cast_precision_loss, reason = "thresholds are far below 2^52")]
            Typed::Int(i) => return Ok(i as f64),
            Typed::Float(f) if f.is_finite() => return Ok(f),
            Typed::Str(t) => {
                return Quantity::parse(t)
                    .map(|q| q.value)
                    .map_err(|e| ctx.err(node, format!("`{key}` in {what}: {e}")));
            }
            _ => {}
        }
    }
    Err(ctx.err(
        node,
        format!(
            "`{key}` in {what} must be a number or a quantity like `\"500ns\"`, found {}",
            describe(node)
        ),
    ))
}

fn min_effect(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<Quantity> {
    let q = match &node.kind {
        Kind::Scalar(s) => match s.typed() {
            Typed::Int(_) | Typed::Float(_) | Typed::Str(_) => {
                Quantity::parse(&s.text).map_err(|e| ctx.err(node, format!("`min_effect` in {what}: {e}")))?
            }
            _ => {
                return Err(ctx.err(
                    node,
                    format!(
                        "`min_effect` in {what} must be a quantity like `\"500ns\"`, found {}",
                        describe(node)
                    ),
                ));
            }
        },
        _ => {
            return Err(ctx.err(
                node,
                format!(
                    "`min_effect` in {what} must be a quantity like `\"500ns\"`, found {}",
                    describe(node)
                ),
            ));
        }
    };
    if q.value < 0.0 {
        return Err(ctx.err(node, format!("`min_effect` in {what} must not be negative")));
    }
    Ok(q)
}

/// The closest derived metric name, for a typo in a `cgp__` name.
fn derived_suggestion(name: &str) -> Option<&'static str> {
    did_you_mean(name, DERIVED_METRICS)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::spec::yaml::parse;

    fn th(metric: &str, yaml: &str) -> std::result::Result<Threshold, String> {
        let n = parse(yaml).unwrap().unwrap();
        let ctx = Ctx {
            path: Path::new("s.yaml"),
            deferred: None,
        };
        threshold(&ctx, metric, &n).map_err(|e| format!("{}: {}", e.message, e.help.unwrap_or_default()))
    }

    #[test]
    fn every_threshold_form() {
        let t = th("gpu__time_duration.sum", "\"3%\"").unwrap();
        assert_eq!(t.kind, ThresholdKind::Relative { fraction: 0.03 });
        assert_eq!(t.direction, Direction::Lower);
        assert_eq!(
            th("launch__registers_per_thread", "exact").unwrap().kind,
            ThresholdKind::Exact
        );
        assert_eq!(
            th("gpu__time_duration.sum", "{max: 500us}").unwrap().kind,
            ThresholdKind::Max { value: 500_000.0 }
        );
        assert_eq!(
            th("dram__bytes.sum.per_second", "{min: 2GB/s}").unwrap().kind,
            ThresholdKind::Min { value: 2e9 }
        );
        assert_eq!(
            th("sm__warps_active.avg.pct_of_peak_sustained_active", "{min: 50}")
                .unwrap()
                .kind,
            ThresholdKind::Min { value: 50.0 }
        );
        let t = th(
            "x__custom.sum_thing",
            "{relative: 2.5%, direction: higher, min_effect: 500ns}",
        )
        .unwrap();
        assert_eq!(t.kind, ThresholdKind::Relative { fraction: 0.025 });
        assert_eq!(t.direction, Direction::Higher);
        assert_eq!(
            t.min_effect,
            Some(Quantity {
                value: 500.0,
                unit: "ns".into()
            })
        );
        let t = th("launch__grid_size", "{exact: true, direction: lower}").unwrap();
        assert_eq!((t.kind, t.direction), (ThresholdKind::Exact, Direction::Lower));
    }

    #[test]
    fn bounds_imply_a_direction_for_unknown_metrics() {
        assert_eq!(
            th("launch__grid_size", "{max: 10}").unwrap().direction,
            Direction::Lower
        );
        assert_eq!(
            th("launch__grid_size", "{min: 10}").unwrap().direction,
            Direction::Higher
        );
    }

    #[test]
    fn bad_thresholds_explain_the_forms() {
        let e = th("launch__grid_size", "\"3%\"").unwrap_err();
        assert!(
            e.contains("does not know whether lower or higher") && e.contains("direction: lower"),
            "{e}"
        );
        assert!(
            th("gpu__time_duration.sum", "3")
                .unwrap_err()
                .contains("bare number")
        );
        assert!(
            th("gpu__time_duration.sum", "\"0%\"")
                .unwrap_err()
                .contains("greater than 0%")
        );
        assert!(
            th("gpu__time_duration.sum", "\"-1%\"")
                .unwrap_err()
                .contains("greater than 0%")
        );
        assert!(
            th("gpu__time_duration.sum", "\"x%\"")
                .unwrap_err()
                .contains("not a percentage")
        );
        assert!(
            th("gpu__time_duration.sum", "fast")
                .unwrap_err()
                .contains("a threshold is")
        );
        assert!(
            th("gpu__time_duration.sum", "[1]")
                .unwrap_err()
                .contains("cannot be a list")
        );
        assert!(
            th("gpu__time_duration.sum", "{min: 1, max: 2}")
                .unwrap_err()
                .contains("more than one rule")
        );
        assert!(
            th("gpu__time_duration.sum", "{direction: lower}")
                .unwrap_err()
                .contains("no rule")
        );
        assert!(
            th("gpu__time_duration.sum", "{exact: false}")
                .unwrap_err()
                .contains("must be `true`")
        );
        assert!(
            th("gpu__time_duration.sum", "{max: 5 parsecs}")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(
            th("gpu__time_duration.sum", "{relative: 3%, direction: up}")
                .unwrap_err()
                .contains("`lower` or `higher`")
        );
        assert!(
            th("gpu__time_duration.sum", "{relative: 3%, min_effect: -5ns}")
                .unwrap_err()
                .contains("negative")
        );
        assert!(
            th("gpu__time_duration.sum", "{relativ: 3%}")
                .unwrap_err()
                .contains("did you mean `relative`")
        );
    }

    #[test]
    fn metric_names() {
        for ok in [
            "gpu__time_duration.sum",
            "launch__registers_per_thread",
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "device__attribute_max_gpu_frequency_khz",
            "profiler__replayer_passes",
            "lts__t_sector_hit_rate.pct",
        ] {
            assert_eq!(check_metric_name(ok), Ok(None), "{ok}");
        }
        for (bad, why) in [
            ("sm__throughput", "base metric name"),
            ("gpu__time_duration", "base metric name"),
            (
                "breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed",
                "`breakdown:` form",
            ),
            ("regex:dram__.*", "`regex:` form"),
            ("group:memory__dram_table", "`group:` form"),
            ("Gpu__time_duration.sum", "uppercase"),
            ("gpu_time_duration.sum", "no `__`"),
            ("gpu__time duration.sum", "contains ` `"),
            ("gpu__time_duration..sum", "not an ncu metric name"),
            ("__x.sum", "not an ncu metric name"),
            ("cgp__flops", "unknown derived metric"),
        ] {
            let (msg, _) = check_metric_name(bad).unwrap_err();
            assert!(msg.contains(why), "{bad}: {msg}");
        }
        assert_eq!(
            check_metric_name("cgp__arithmetic_intensity"),
            Ok(Some(Needs {
                flops: true,
                bytes: true
            }))
        );
        assert_eq!(
            derived_suggestion("cgp__achieved_flop.per_second"),
            Some("cgp__achieved_flops.per_second")
        );
    }
}
