//! `metrics:` of a benchmark-harness target (`profiler: nvbench`, `gbench`, `pytest-benchmark`;
//! docs/harnesses.md): the harness's own metric names, each with its threshold; the direction
//! comes from the name where it says it (times and cycles lower, rates higher), else the
//! threshold must give it.

use super::measure::metric_entries;
use super::*;
use crate::spec::model::{Direction, MetricSpec};

/// What each harness's targets gate, for messages.
fn examples(profiler: ProfilerKind) -> &'static str {
    match profiler {
        ProfilerKind::Gbench => {
            "Google Benchmark targets gate `real_time` (the manual CUDA-event time under UseManualTime), `cpu_time` and user counters (`bytes_per_second`, `items_per_second`, custom), e.g. `metrics: {real_time: \"5%\"}`"
        }
        ProfilerKind::PytestBenchmark => {
            "pytest-benchmark targets gate `time` (seconds per iteration of each round of `stats.data`), e.g. `metrics: {time: \"5%\"}`"
        }
        _ => {
            "nvbench targets gate `nv/cold/time/gpu` (the cold GPU time: per sample with --jsonbin, else the mean of each process), `nv/cold/cycles/gpu` (with the clock sidecar) and any summary by its tag (`nv/cold/bw/global/bytes_per_second`, custom tags), e.g. `metrics: {nv/cold/time/gpu: \"5%\"}`"
        }
    }
}

/// Whether lower or higher is better for a harness metric, by its name (`None`: it does not say).
pub(crate) fn harness_direction(name: &str) -> Option<Direction> {
    let n = name.to_ascii_lowercase();
    let higher = [
        "per_second",
        "rate",
        "bw/",
        "utilization",
        "fom",
        "throughput",
        "sm_clock",
    ];
    let lower = ["time", "cycles", "stdev", "iqr", "noise"];
    if higher.iter().any(|h| n.contains(h)) {
        Some(Direction::Higher)
    } else if lower.iter().any(|l| n.contains(l)) {
        Some(Direction::Lower)
    } else {
        None
    }
}

/// `metrics:` of a harness target.
pub(super) fn harness_metrics(
    ctx: &Ctx<'_>,
    node: Option<&Node>,
    item: &Node,
    what: &str,
    profiler: ProfilerKind,
) -> Result<Vec<MetricSpec>> {
    let Some(node) = node else {
        return Err(ctx
            .err(item, format!("{what} has no `metrics`"))
            .help(examples(profiler)));
    };
    let entries = metric_entries(ctx, node, what)?;
    if entries.is_empty() {
        return Err(ctx
            .err(node, format!("`metrics` of {what} is empty"))
            .help(examples(profiler)));
    }
    let mut out = Vec::with_capacity(entries.len());
    for (name, key_node, value) in &entries {
        if profiler == ProfilerKind::PytestBenchmark && *name != "time" {
            return Err(ctx
                .err(
                    key_node,
                    format!(
                        "`{name}` of {what}: pytest-benchmark's file has one measurement per round, `time`"
                    ),
                )
                .help(examples(profiler)));
        }
        let Some(threshold) = ctx.keep(threshold::threshold_or(ctx, name, value, harness_direction(name)))?
        else {
            continue;
        };
        out.push(MetricSpec {
            name: (*name).to_owned(),
            threshold,
        });
    }
    Ok(out)
}
