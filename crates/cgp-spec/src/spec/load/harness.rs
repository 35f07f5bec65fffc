//! `metrics:` of a benchmark-harness target (`profiler: nvbench`, `gbench`, `pytest-benchmark`;
//! docs/harnesses.md): the harness's own metric names, each with its threshold; the direction
//! comes from the name where it says it (times and cycles lower, rates higher), else the
//! threshold must give it.

use super::measure::metric_entries;
use super::*;
use crate::spec::model::{Direction, MetricSpec};

/// Whether lower or higher is better for a harness metric, by its name (`None`: it does not say;
/// the words are `measured::profiler::harness_direction`'s, which the readers and `init` share).
pub(crate) fn harness_direction(name: &str) -> Option<Direction> {
    crate::measured::profiler::harness_direction(name)
}

/// `metrics:` of a harness target.
pub(super) fn harness_metrics(
    ctx: &Ctx<'_>,
    node: Option<&Node>,
    item: &Node,
    what: &str,
    (profiler, examples, only): (ProfilerKind, &'static str, Option<&'static str>),
) -> Result<Vec<MetricSpec>> {
    let Some(node) = node else {
        return Err(ctx.err(item, format!("{what} has no `metrics`")).help(examples));
    };
    let entries = metric_entries(ctx, node, what)?;
    if entries.is_empty() {
        return Err(ctx
            .err(node, format!("`metrics` of {what} is empty"))
            .help(examples));
    }
    let mut out = Vec::with_capacity(entries.len());
    for (name, key_node, value) in &entries {
        if let Some(only) = only
            && *name != only
        {
            return Err(ctx
                .err(
                    key_node,
                    format!("`{name}` of {what}: {profiler}'s file has one measurement per round, `{only}`"),
                )
                .help(examples));
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
