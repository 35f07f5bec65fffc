//! What a target measures: ncu metrics and thresholds, Nsight Systems categories and metrics, the
//! kernel filter, NVTX ranges and the work expression.

use super::*;

/// `categories:` of an nsys target: an inline mapping, or the path of a shared file (relative
/// to the spec).
pub(super) fn categories(ctx: &Ctx<'_>, node: &Node, what: &str, spec_dir: &Path) -> Result<CategoryRules> {
    if let Kind::Scalar(_) = node.kind {
        let p = PathBuf::from(ctx.non_empty_text(node, &format!("`categories` of {what}"))?);
        let p = if p.is_absolute() { p } else { spec_dir.join(p) };
        return crate::spec::load_categories(&p).map_err(|e| {
            if e.line.is_some() {
                e
            } else {
                ctx.err(node, format!("`categories` of {what}: {}", e.message))
                    .help("give a YAML or JSON file of regex -> category, relative to the spec")
            }
        });
    }
    crate::spec::categories::decode(ctx, node, &ctx.path.display().to_string())
}

/// The entries of a target's `metrics:` mapping, at most [`MAX_METRICS`] of them (ncu and nsys
/// targets alike).
pub(super) fn metric_entries<'n>(
    ctx: &Ctx<'_>,
    node: &'n Node,
    what: &str,
) -> Result<Vec<(&'n str, &'n Node, &'n Node)>> {
    if let Kind::Map(all) = &node.kind
        && all.len() > MAX_METRICS
    {
        return Err(ctx
            .err(
                node,
                format!(
                    "`metrics` of {what} lists {} metrics; at most {MAX_METRICS} are allowed",
                    all.len()
                ),
            )
            .help("gate the metrics that matter; `explain: true` collects the counters that say why a time changed without a row each (docs/why.md)"));
    }
    ctx.entries(node, &format!("`metrics` of {what}"))
}

/// `metrics:` of an nsys target: `gpu_time`, `non_gpu_time`, `category:<name>`,
/// `kernel:<regex>`, and their instance counts, added with an `exact` threshold for every
/// category and kernel metric that does not list its own.
pub(super) fn nsys_metrics(
    ctx: &Ctx<'_>,
    node: Option<&Node>,
    item: &Node,
    what: &str,
    rules: Option<&CategoryRules>,
) -> Result<Vec<crate::spec::model::MetricSpec>> {
    let example = "e.g. `metrics: {gpu_time: \"5%\", category:gemm: \"5%\"}`";
    let Some(node) = node else {
        return Err(ctx
            .err(item, format!("{what} has no `metrics`"))
            .help(format!("{}; {example}", crate::spec::NSYS_METRICS_HELP)));
    };
    let entries = metric_entries(ctx, node, what)?;
    if entries.is_empty() {
        return Err(ctx
            .err(node, format!("`metrics` of {what} is empty"))
            .help(format!("{}; {example}", crate::spec::NSYS_METRICS_HELP)));
    }
    let known = crate::spec::category_names(rules);
    let mut out: Vec<crate::spec::model::MetricSpec> = Vec::with_capacity(entries.len() * 2);
    for (name, key_node, value) in &entries {
        let m = crate::spec::parse_nsys_metric(name)
            .map_err(|(msg, help)| ctx.err(key_node, format!("{msg} (in {what})")).help(help))?;
        if let crate::spec::NsysMetric::Category(c) | crate::spec::NsysMetric::CategoryInstances(c) = &m
            && !known.contains(c)
        {
            let names: Vec<&str> = known.iter().map(String::as_str).collect();
            let guess = did_you_mean(c, &names)
                .map(|g| format!("did you mean `category:{g}`? "))
                .unwrap_or_default();
            return Err(ctx
                .err(key_node, format!("no category rule gives `{c}` (in {what})"))
                .help(format!("{guess}the categories are {}", list(&names))));
        }
        let Some(threshold) = ctx.keep(threshold::threshold(ctx, name, value))? else {
            continue;
        };
        out.push(crate::spec::model::MetricSpec {
            name: (*name).to_owned(),
            threshold,
        });
    }
    for (name, _, _) in &entries {
        let Some(counted) = crate::spec::instances_of(name) else {
            continue;
        };
        if !out.iter().any(|m| m.name == counted) {
            out.push(crate::spec::model::MetricSpec {
                name: counted,
                threshold: crate::spec::model::Threshold {
                    kind: crate::spec::model::ThresholdKind::Exact,
                    direction: crate::spec::model::Direction::Lower,
                    min_effect: None,
                },
            });
        }
    }
    Ok(out)
}

/// On a `profiler: cupti` target, a metric only Nsight Compute can measure is refused at its key
/// (CUPTI's kernel records hold the duration and the launch configuration, `CUPTI_METRICS`).
pub(super) fn cupti_metrics(ctx: &Ctx<'_>, node: Option<&Node>, what: &str) -> Result<()> {
    let Some(node) = node else { return Ok(()) };
    for (name, key_node, _) in ctx.entries(node, &format!("`metrics` of {what}"))? {
        if name.starts_with(crate::spec::DERIVED_PREFIX) || crate::spec::model::CUPTI_METRICS.contains(&name)
        {
            continue;
        }
        return Err(ctx
            .err(
                key_node,
                format!("`{name}` of {what} is a counter only Nsight Compute measures, and this is a `profiler: cupti` target"),
            )
            .help(format!(
                "CUPTI measures {}; gate `{name}` on a `profiler: ncu` target, or set `explain: remeasure` to have ncu collect the counters that say why a time changed (docs/cupti.md)",
                crate::spec::model::CUPTI_METRICS.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
            )));
    }
    Ok(())
}

pub(super) fn kernel(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<KernelFilter> {
    let text = ctx.non_empty_text(node, &format!("`kernel` of {what}"))?;
    let Some(pattern) = text.strip_prefix("regex:") else {
        return Ok(KernelFilter::Exact(text.to_owned()));
    };
    if pattern.is_empty() {
        return Err(ctx
            .err(node, format!("the `kernel` regex of {what} is empty"))
            .help("omit `kernel` to profile every kernel"));
    }
    regex::Regex::new(pattern).map(KernelFilter::Regex).map_err(|e| {
        // The regex crate's message spans several lines with a caret; keep its last line.
        let detail = e.to_string();
        let reason = detail.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("invalid");
        ctx.err(node, format!("bad regex `{pattern}` in the `kernel` of {what}: {}", reason.trim().trim_start_matches("error: ")))
            .help("`regex:` is followed by a regular expression matched against the kernel's demangled name as ncu prints it, e.g. `regex:gemm_` (docs/spec.md, \"Selecting kernels\")")
    })
}

pub(super) fn nvtx(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<Vec<String>> {
    let one = |n: &Node| -> Result<String> {
        Ok(ctx
            .non_empty_text(n, &format!("an `nvtx` include expression of {what}"))?
            .to_owned())
    };
    match &node.kind {
        Kind::Seq(items) => {
            if items.is_empty() {
                return Err(ctx
                    .err(node, format!("`nvtx` of {what} is empty"))
                    .help("omit `nvtx` to profile outside any range filter"));
            }
            items.iter().map(one).collect()
        }
        _ => Ok(vec![one(node)?]),
    }
}

/// A `flops:`/`bytes:` expression, checked against every size. Returns the text and its node.
pub(super) fn work_expr<'n>(
    ctx: &Ctx<'_>,
    node: Option<&'n Node>,
    key: &str,
    what: &str,
    sizes: &[(Size, Mark)],
) -> Result<Option<(String, &'n Node)>> {
    let Some(node) = node else { return Ok(None) };
    let text = match &node.kind {
        Kind::Scalar(s) if matches!(s.typed(), Typed::Int(_) | Typed::Float(_) | Typed::Str(_)) => {
            s.text.as_str()
        }
        _ => {
            return Err(ctx.err(
                node,
                format!(
                    "`{key}` of {what} must be an expression like `2*m*n*k`, found {}",
                    describe(node)
                ),
            ));
        }
    };
    let expr = Expr::parse(text).map_err(|e| {
        ctx.err(node, format!("bad `{key}` expression `{text}` in {what}: {e}"))
            .help("use numbers, size parameter names, `+ - * /` and parentheses, e.g. `2*m*n*k`")
    })?;
    for param in expr.params() {
        if let Some((size, mark)) = sizes.iter().find(|(s, _)| s.get(param).is_none()) {
            let where_ = if size.params.is_empty() {
                format!("{what} has no `sizes`")
            } else {
                format!("size `{}` (line {}) does not define it", size.key(), mark.line)
            };
            return Err(ctx
                .err(
                    node,
                    format!("`{key}` of {what} uses parameter `{param}`, but {where_}"),
                )
                .help(format!("every size must define each parameter `{key}` uses")));
        }
    }
    for (size, _) in sizes {
        let v = expr
            .eval(size)
            .map_err(|e| ctx.err(node, format!("`{key}` of {what}: {e}")))?;
        // Work of 0 or less gives a rate of 0 (or below): the row could never be judged
        // (issue 34: `flops: 0*n` left the flop/s row inconclusive forever).
        if !(v.is_finite() && v > 0.0) {
            let at = if size.params.is_empty() {
                String::new()
            } else {
                format!(" at size `{}`", size.key())
            };
            return Err(ctx
                .err(
                    node,
                    format!("`{key}` of {what} is {v}{at}; the work of a launch must be more than 0"),
                )
                .help(format!("give `{key}` as the work one launch does, e.g. `flops: 2*m*n*k`, `bytes: 4*(m*k + k*n + m*n)`")));
        }
    }
    Ok(Some((text.to_owned(), node)))
}

pub(super) fn metrics(
    ctx: &Ctx<'_>,
    node: Option<&Node>,
    item: &Node,
    what: &str,
    has_flops: bool,
    has_bytes: bool,
) -> Result<Vec<crate::spec::model::MetricSpec>> {
    let example = "e.g. `metrics: {gpu__time_duration.sum: \"3%\"}`";
    let Some(node) = node else {
        return Err(ctx
            .err(item, format!("{what} has no `metrics`"))
            .help(format!("list the ncu metrics to judge, {example}")));
    };
    let entries = metric_entries(ctx, node, what)?;
    if entries.is_empty() {
        return Err(ctx
            .err(node, format!("`metrics` of {what} is empty"))
            .help(format!("list the ncu metrics to judge, {example}")));
    }
    let mut out = Vec::with_capacity(entries.len());
    for (name, key_node, value) in entries {
        let Some(needs) = ctx.keep(
            threshold::check_metric_name(name)
                .map_err(|(msg, help)| ctx.err(key_node, format!("{msg} (in {what})")).help(help)),
        )?
        else {
            continue;
        };
        if let Some(needs) = needs {
            let missing: Vec<&str> = [
                ("flops", needs.flops && !has_flops),
                ("bytes", needs.bytes && !has_bytes),
            ]
            .into_iter()
            .filter_map(|(k, miss)| miss.then_some(k))
            .collect();
            if !missing.is_empty() {
                let keys: Vec<String> = missing.iter().map(|k| format!("`{k}:`")).collect();
                return Err(ctx
                    .err(key_node, format!("derived metric `{name}` needs {} on {what}", keys.join(" and ")))
                    .help("give the work per launch as an expression over the size parameters, e.g. `flops: 2*m*n*k`, `bytes: 4*(m*k + k*n + m*n)`"));
            }
        }
        let Some(threshold) = ctx.keep(threshold::threshold(ctx, name, value))? else {
            continue;
        };
        out.push(MetricSpec {
            name: name.to_owned(),
            threshold,
        });
    }
    Ok(out)
}
