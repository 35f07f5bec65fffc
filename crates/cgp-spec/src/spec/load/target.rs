//! A target of the spec: its name, its merged keys (target over `defaults`), the profiler's own
//! keys and every cross-field check of one target.

use super::command::{ci_credentials_acknowledged, command, env, env_passthrough, sizes};
use super::control::{clocks, timeout};
use super::harness::harness_metrics;
use super::measure::{categories, cupti_metrics, kernel, metrics, nsys_metrics, nvtx, work_expr};
use super::*;

/// Target names become directory and file names (recordings, baselines), so they stay simple.
pub(super) fn target_name<'n>(ctx: &Ctx<'_>, node: &'n Node) -> Result<&'n str> {
    let name = ctx.non_empty_text(node, "a target `name`")?;
    if name.len() > MAX_NAME_BYTES {
        return Err(ctx
            .err(
                node,
                format!(
                    "target name is {} bytes long; at most {MAX_NAME_BYTES} are allowed",
                    name.len()
                ),
            )
            .help("the name becomes a file name (`<name>.json`, a recording folder); file systems allow 255 bytes"));
    }
    let ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !name.starts_with('.');
    if !ok {
        return Err(ctx
            .err(
                node,
                format!("target name `{name}` has characters that cannot be used"),
            )
            .help("use letters, digits, `_`, `-` and `.` (not first); the name is used in file names"));
    }
    Ok(name)
}

/// The steps of one target. With a collector, a step's error is kept and the next independent
/// step still runs (one `validate` reports every error of the target); a step that needs the
/// value of a failed one is skipped, and the target is `None` at the end.
struct Steps<'c, 'p> {
    ctx: &'c Ctx<'p>,
    failed: std::cell::Cell<bool>,
}

impl Steps<'_, '_> {
    fn opt<T>(&self, r: Result<T>) -> Result<Option<T>> {
        let v = self.ctx.keep(r)?;
        if v.is_none() {
            self.failed.set(true);
        }
        Ok(v)
    }

    /// The step's value, or `fallback` (never used: the target fails) when it failed.
    fn or<T>(&self, r: Result<T>, fallback: T) -> Result<T> {
        Ok(self.opt(r)?.unwrap_or(fallback))
    }
}

/// One target, `None` when its errors were kept for the end (see [`Steps`]).
pub(super) fn target(
    ctx: &Ctx<'_>,
    name: &str,
    item: &Node,
    m: &Merged<'_, '_>,
    spec_dir: &Path,
) -> Result<Option<Target>> {
    let what = format!("target `{name}`");
    let s = Steps {
        ctx,
        failed: std::cell::Cell::new(false),
    };

    // Sizes come first: the command's placeholders and the expressions are checked against them
    // (and wait while the sizes are wrong).
    let sizes = s.opt(sizes(ctx, m.get("sizes"), &m.whose(&["sizes"], &what)))?;
    if let Some(sizes) = &sizes {
        s.opt(size_names(ctx, sizes, &what))?;
    }

    let command = target_command(&s, m, item, &what, sizes.as_deref())?;
    let cwd = s.or(working_dir(ctx, m, &what, spec_dir), None)?;
    let (env, env_passthrough) = s.or(environment(ctx, m, &what), Default::default())?;
    let (kernel, nvtx) = kernel_and_nvtx(&s, m, &what)?;
    let (launch_skip, launch_count) = s.or(launch_range(ctx, m, &what), (None, None))?;

    let work_expr = |key: &str| match &sizes {
        Some(sizes) => s.or(work_expr(ctx, m.get(key), key, &what, sizes), None),
        None => Ok(None),
    };
    let flops = work_expr("flops")?;
    let bytes = work_expr("bytes")?;
    // Whether `flops` and `bytes` are set, also when their expressions are wrong.
    let work = (m.get("flops").is_some(), m.get("bytes").is_some());

    let profiler = s.opt(profiler(ctx, m, &what))?;
    let (categories, metrics, libcupti) = match profiler {
        Some(profiler) => profiler_keys(&s, m, item, &what, profiler, spec_dir, work)?,
        None => (None, Vec::new(), None),
    };

    let run = run_keys(&s, m, &what, profiler, spec_dir)?;

    let (false, Some(sizes), Some(profiler), Some((clocks, clock_control))) =
        (s.failed.get(), sizes, profiler, run.clocks)
    else {
        return Ok(None);
    };
    Ok(Some(Target {
        name: name.to_owned(),
        command,
        cwd,
        env,
        env_passthrough,
        kernel,
        nvtx,
        launch_skip,
        launch_count,
        sizes: sizes.into_iter().map(|(s, _)| s).collect(),
        metrics,
        repetitions: run.repetitions,
        max_repetitions: run.max_repetitions,
        baseline_repetitions: run.baseline_repetitions,
        warmup: run.warmup,
        timeout: run.timeout,
        profiling: Profiling {
            clock_control,
            cache_control: run.cache_control,
            replay_mode: run.replay_mode,
        },
        clocks,
        flops: flops.map(|(t, _)| t),
        bytes: bytes.map(|(t, _)| t),
        profiler,
        libcupti,
        categories,
        allow_missing: run.allow_missing,
        explain: run.explain,
        sass: run.sass,
        kernels: run.kernels,
    }))
}

/// How a target is run, whatever it measures: repetitions, warm-up, timeout, ncu's replay and
/// cache, the clocks (`None`: wrong), `allow_missing`, `explain`, `sass` and `kernels`.
struct RunKeys {
    repetitions: u32,
    max_repetitions: u32,
    baseline_repetitions: u32,
    warmup: u32,
    timeout: Duration,
    cache_control: CacheControl,
    replay_mode: ReplayMode,
    clocks: Option<(ClockSetting, ClockControl)>,
    allow_missing: bool,
    explain: Explain,
    sass: Vec<PathBuf>,
    kernels: KernelMode,
}

/// The steps of [`RunKeys`], in the order [`target`] takes them (its errors are kept in it).
fn run_keys(
    s: &Steps<'_, '_>,
    m: &Merged<'_, '_>,
    what: &str,
    profiler: Option<ProfilerKind>,
    spec_dir: &Path,
) -> Result<RunKeys> {
    let ctx = s.ctx;
    let (repetitions, max_repetitions, baseline_repetitions) =
        s.or(repetition_counts(ctx, m, what), (0, 0, 0))?;
    let warmup = match m.get("warmup") {
        Some(n) => s.or(
            ctx.uint(n, &format!("`warmup` of {}", m.whose(&["warmup"], what))),
            0,
        )?,
        // A harness warms up itself (Google Benchmark's iteration-count estimate runs before the
        // first repetition, nvbench's `cold_warmup_runs`, pytest-benchmark's
        // `--benchmark-warmup`): each of its samples is kept (docs/harnesses.md).
        None if profiler.is_some_and(ProfilerKind::is_harness) => DEFAULT_HARNESS_WARMUP,
        None => DEFAULT_WARMUP,
    };
    let timeout = match m.get("timeout") {
        Some(n) => s.or(timeout(ctx, n, &m.whose(&["timeout"], what)), DEFAULT_TIMEOUT)?,
        None => DEFAULT_TIMEOUT,
    };
    let (cache_control, replay_mode) = s.or(
        cache_and_replay(ctx, m, what),
        (CacheControl::All, ReplayMode::Kernel),
    )?;
    let clocks_at = m.whose(&["clocks", "clock_control"], what);
    let clocks = s.opt(clocks(ctx, m.get("clocks"), m.get("clock_control"), &clocks_at))?;
    let kernels_at = m.whose(&["kernels", "metrics"], what);
    // The fields that follow are evaluated in the order they are written.
    Ok(RunKeys {
        repetitions,
        max_repetitions,
        baseline_repetitions,
        warmup,
        timeout,
        cache_control,
        replay_mode,
        clocks,
        allow_missing: s.or(allow_missing(ctx, m, what), false)?,
        explain: s.or(explain(ctx, m, what, profiler.unwrap_or_default()), Explain::Off)?,
        sass: match m.get("sass") {
            Some(n) => s.or(
                sass_paths(ctx, n, &m.whose(&["sass"], what), spec_dir),
                Vec::new(),
            )?,
            None => Vec::new(),
        },
        kernels: s.or(
            kernel_mode(ctx, m.get("kernels"), m.get("metrics"), &kernels_at),
            KernelMode::Each,
        )?,
    })
}

/// The target's `command`, its placeholders checked against the sizes (the check waits while the
/// sizes are wrong).
fn target_command(
    s: &Steps<'_, '_>,
    m: &Merged<'_, '_>,
    item: &Node,
    what: &str,
    sizes: Option<&[(Size, Mark)]>,
) -> Result<Vec<String>> {
    let ctx = s.ctx;
    match (m.get("command"), sizes) {
        (None, _) => s.or(
            Err(ctx
                .err(item, format!("{what} has no `command`"))
                .help("add the program to run as a list, e.g. `command: [./build/bench, --n, \"{n}\"]`")),
            Vec::new(),
        ),
        (Some(n), Some(sizes)) => s.or(command(ctx, n, what, sizes), Vec::new()),
        (Some(_), None) => Ok(Vec::new()),
    }
}

/// The target's `kernel` filter and `nvtx` ranges.
fn kernel_and_nvtx(
    s: &Steps<'_, '_>,
    m: &Merged<'_, '_>,
    what: &str,
) -> Result<(Option<KernelFilter>, Vec<String>)> {
    let kernel = match m.get("kernel") {
        Some(n) => s.opt(kernel(s.ctx, n, &m.whose(&["kernel"], what)))?,
        None => None,
    };
    let nvtx = match m.get("nvtx") {
        Some(n) => s.or(nvtx(s.ctx, n, &m.whose(&["nvtx"], what)), Vec::new())?,
        None => Vec::new(),
    };
    Ok((kernel, nvtx))
}

/// A target's categories, metrics and libcupti.
type ProfilerKeys = (Option<CategoryRules>, Vec<MetricSpec>, Option<PathBuf>);

/// The keys read by the target's profiler: the other profilers' keys refused, its categories
/// (nsys), its metrics and its libcupti (cupti). `work`: whether `flops` and `bytes` are set.
fn profiler_keys(
    s: &Steps<'_, '_>,
    m: &Merged<'_, '_>,
    item: &Node,
    what: &str,
    profiler: ProfilerKind,
    spec_dir: &Path,
    work: (bool, bool),
) -> Result<ProfilerKeys> {
    let ctx = s.ctx;
    s.opt(other_profilers_keys(ctx, m, profiler, what))?;
    let categories = match m.get("categories") {
        // A `categories` of `defaults:` is for the nsys targets of a mixed spec.
        Some(_) if !profiler_reads(profiler, "categories") => None,
        Some(n) => s.opt(categories(ctx, n, &m.whose(&["categories"], what), spec_dir))?,
        None => None,
    };
    // nsys's metrics name its categories: they wait while the categories are wrong.
    let metrics =
        if profiler_reads(profiler, "categories") && m.get("categories").is_some() && categories.is_none() {
            Vec::new()
        } else {
            let metrics_at = m.whose(&["metrics"], what);
            s.or(
                target_metrics(ctx, m, item, &metrics_at, profiler, categories.as_ref(), work),
                Vec::new(),
            )?
        };
    let libcupti = s.or(libcupti(ctx, m, what, profiler, spec_dir), None)?;
    Ok((categories, metrics, libcupti))
}

/// `metrics:` as the target's profiler reads them: nsys's, or ncu's (on a cupti target, only those
/// CUPTI measures). `work`: whether `flops` and `bytes` are set.
fn target_metrics(
    ctx: &Ctx<'_>,
    m: &Merged<'_, '_>,
    item: &Node,
    what: &str,
    profiler: ProfilerKind,
    categories: Option<&CategoryRules>,
    work: (bool, bool),
) -> Result<Vec<MetricSpec>> {
    use super::super::kinds::{Metrics, rules};
    match rules(profiler).metrics {
        Metrics::Categories => nsys_metrics(ctx, m.get("metrics"), item, what, categories),
        Metrics::Harness { examples, only } => {
            harness_metrics(ctx, m.get("metrics"), item, what, (profiler, examples, only))
        }
        Metrics::Counters => metrics(ctx, m.get("metrics"), item, what, work.0, work.1),
        Metrics::CounterTimes => {
            let all = metrics(ctx, m.get("metrics"), item, what, work.0, work.1)?;
            cupti_metrics(ctx, m.get("metrics"), what)?;
            Ok(all)
        }
    }
}

/// `libcupti:` of a cupti target, resolved against the spec's folder (`None` elsewhere: the key
/// is refused on other targets, and one of `defaults:` is for the cupti targets).
fn libcupti(
    ctx: &Ctx<'_>,
    m: &Merged<'_, '_>,
    what: &str,
    profiler: ProfilerKind,
    spec_dir: &Path,
) -> Result<Option<PathBuf>> {
    match m.get("libcupti") {
        Some(n) if profiler_reads(profiler, "libcupti") => {
            let p = PathBuf::from(
                ctx.non_empty_text(n, &format!("`libcupti` of {}", m.whose(&["libcupti"], what)))?,
            );
            Ok(Some(if p.is_absolute() { p } else { spec_dir.join(p) }))
        }
        _ => Ok(None),
    }
}

/// `env` and `env_passthrough` of a target.
fn environment(
    ctx: &Ctx<'_>,
    m: &Merged<'_, '_>,
    what: &str,
) -> Result<(BTreeMap<String, String>, Vec<String>)> {
    let set = match m.get("env") {
        Some(n) => env(ctx, n, &m.whose(&["env"], what))?,
        None => BTreeMap::new(),
    };
    let acknowledged = match m.get("env_passthrough_ci_credentials") {
        Some(n) => ci_credentials_acknowledged(ctx, n, &m.whose(&["env_passthrough_ci_credentials"], what))?,
        None => Vec::new(),
    };
    let passthrough = match m.get("env_passthrough") {
        Some(n) => env_passthrough(ctx, n, &m.whose(&["env_passthrough"], what), &acknowledged)?,
        None => Vec::new(),
    };
    Ok((set, passthrough))
}

/// A size names a recording folder: its `key=value` pairs must fit a file name.
fn size_names(ctx: &Ctx<'_>, sizes: &[(Size, Mark)], what: &str) -> Result<()> {
    for (size, mark) in sizes {
        let key = size.key();
        if key.len() > MAX_NAME_BYTES {
            return Err(ctx
                .err_at(
                    *mark,
                    format!(
                        "a size of {what} is {} bytes long as a name (`{}…`); at most {MAX_NAME_BYTES} are allowed",
                        key.len(),
                        key.chars().take(40).collect::<String>()
                    ),
                )
                .help("the size's `key=value` pairs name a recording folder, and file systems allow 255 bytes; use shorter values"));
        }
    }
    Ok(())
}

fn working_dir(ctx: &Ctx<'_>, m: &Merged<'_, '_>, what: &str, spec_dir: &Path) -> Result<Option<PathBuf>> {
    Ok(match m.get("cwd") {
        Some(n) => {
            let p = PathBuf::from(ctx.non_empty_text(n, &format!("`cwd` of {}", m.whose(&["cwd"], what)))?);
            Some(if p.is_absolute() { p } else { spec_dir.join(p) })
        }
        None => None,
    })
}

/// `launch_skip` and `launch_count` (at least 1).
fn launch_range(ctx: &Ctx<'_>, m: &Merged<'_, '_>, what: &str) -> Result<(Option<u64>, Option<u64>)> {
    let launch_skip = match m.get("launch_skip") {
        Some(n) => Some(ctx.uint(
            n,
            &format!("`launch_skip` of {}", m.whose(&["launch_skip"], what)),
        )?),
        None => None,
    };
    let launch_count = match m.get("launch_count") {
        Some(n) => {
            let c: u64 = ctx.uint(
                n,
                &format!("`launch_count` of {}", m.whose(&["launch_count"], what)),
            )?;
            if c == 0 {
                return Err(ctx
                    .err(
                        n,
                        format!(
                            "`launch_count` of {} must be at least 1",
                            m.whose(&["launch_count"], what)
                        ),
                    )
                    .help("omit it to profile every matching launch"));
            }
            Some(c)
        }
        None => None,
    };
    Ok((launch_skip, launch_count))
}

fn profiler(ctx: &Ctx<'_>, m: &Merged<'_, '_>, what: &str) -> Result<ProfilerKind> {
    Ok(match m.get("profiler") {
        Some(n) => {
            let names: Vec<&str> = ProfilerKind::ALL.iter().map(|k| k.as_str()).collect();
            let name = ctx.choice(
                n,
                &format!("`profiler` of {}", m.whose(&["profiler"], what)),
                &names,
            )?;
            ProfilerKind::ALL
                .into_iter()
                .find(|k| k.as_str() == name)
                .unwrap_or_default()
        }
        None => ProfilerKind::default(),
    })
}

/// `repetitions`, `max_repetitions` and `baseline_repetitions`, each within its bounds.
fn repetition_counts(ctx: &Ctx<'_>, m: &Merged<'_, '_>, what: &str) -> Result<(u32, u32, u32)> {
    let repetitions = match m.get("repetitions") {
        Some(n) => {
            let r: u32 = ctx.uint(
                n,
                &format!("`repetitions` of {}", m.whose(&["repetitions"], what)),
            )?;
            repetitions_cap(ctx, n, "repetitions", &m.whose(&["repetitions"], what), r)?;
            if r < 1 {
                return Err(ctx
                    .err(
                        n,
                        format!("`repetitions` of {} must be at least 1, found {r}", m.whose(&["repetitions"], what)),
                    )
                    .help(
                        "one run (process) per size is enough when the baseline holds at least 2 runs; 10 is the default",
                    ));
            }
            r
        }
        None => DEFAULT_REPETITIONS,
    };
    let max_repetitions = match m.get("max_repetitions") {
        Some(n) => {
            let r: u32 = ctx.uint(
                n,
                &format!("`max_repetitions` of {}", m.whose(&["max_repetitions"], what)),
            )?;
            repetitions_cap(ctx, n, "max_repetitions", &m.whose(&["max_repetitions"], what), r)?;
            if r < repetitions {
                return Err(ctx
                    .err(
                        n,
                        format!(
                            "`max_repetitions` of {} ({r}) is less than `repetitions` ({repetitions})",
                            m.whose(&["max_repetitions", "repetitions"], what)
                        ),
                    )
                    .help("`max_repetitions` bounds re-measurement and must be at least `repetitions`"));
            }
            r
        }
        None => repetitions.saturating_mul(2),
    };
    let baseline_repetitions = match m.get("baseline_repetitions") {
        Some(n) => {
            let r: u32 = ctx.uint(
                n,
                &format!(
                    "`baseline_repetitions` of {}",
                    m.whose(&["baseline_repetitions"], what)
                ),
            )?;
            repetitions_cap(
                ctx,
                n,
                "baseline_repetitions",
                &m.whose(&["baseline_repetitions"], what),
                r,
            )?;
            if r < repetitions {
                return Err(ctx
                    .err(
                        n,
                        format!(
                            "`baseline_repetitions` of {} ({r}) is less than `repetitions` ({repetitions})", m.whose(&["baseline_repetitions", "repetitions"], what)
                        ),
                    )
                    .help("a baseline is measured once per merge and compared by every check: store at least as many repetitions as a check takes (default 50)"));
            }
            r
        }
        None => DEFAULT_BASELINE_REPETITIONS.max(repetitions),
    };
    Ok((repetitions, max_repetitions, baseline_repetitions))
}

/// ncu's `cache_control` and `replay_mode`.
fn cache_and_replay(ctx: &Ctx<'_>, m: &Merged<'_, '_>, what: &str) -> Result<(CacheControl, ReplayMode)> {
    let cache_control = match m.get("cache_control") {
        Some(n) => match ctx.choice(
            n,
            &format!("`cache_control` of {}", m.whose(&["cache_control"], what)),
            &["all", "none"],
        )? {
            "all" => CacheControl::All,
            _ => CacheControl::None,
        },
        None => CacheControl::All,
    };
    let replay_mode = match m.get("replay_mode") {
        Some(n) => match ctx.choice(
            n,
            &format!("`replay_mode` of {}", m.whose(&["replay_mode"], what)),
            &["kernel", "application", "range", "app-range"],
        )? {
            "application" => ReplayMode::Application,
            "range" => ReplayMode::Range,
            "app-range" => ReplayMode::AppRange,
            _ => ReplayMode::Kernel,
        },
        None => ReplayMode::Kernel,
    };
    Ok((cache_control, replay_mode))
}

fn allow_missing(ctx: &Ctx<'_>, m: &Merged<'_, '_>, what: &str) -> Result<bool> {
    let allow_missing = match m.get("allow_missing") {
        Some(n) => match &n.kind {
            Kind::Scalar(s) if matches!(s.typed(), Typed::Bool(_)) => s.typed() == Typed::Bool(true),
            _ => {
                return Err(ctx
                    .err(
                        n,
                        format!(
                            "`allow_missing` of {} must be `true` or `false`, found {}",
                            m.whose(&["allow_missing"], what),
                            describe(n)
                        ),
                    )
                    .help(
                        "`allow_missing: true` lets baseline rows this run did not measure pass the gate",
                    ));
            }
        },
        None => false,
    };
    Ok(allow_missing)
}

fn explain(ctx: &Ctx<'_>, m: &Merged<'_, '_>, what: &str, profiler: ProfilerKind) -> Result<Explain> {
    let explain = match m.get("explain") {
        Some(n) => match &n.kind {
            Kind::Scalar(s) if s.typed() == Typed::Bool(true) => Explain::Always,
            Kind::Scalar(s) if s.typed() == Typed::Bool(false) => Explain::Off,
            Kind::Scalar(s) if s.typed() == Typed::Str("remeasure") => Explain::Remeasure,
            _ => {
                return Err(ctx
                    .err(n, format!("`explain` of {} must be `true`, `false` or `remeasure`, found {}", m.whose(&["explain"], what), describe(n)))
                    .help("`explain: true` collects the counters that say why a time changed in every run; `remeasure` only in baseline updates and when re-measuring doubtful or changed rows (docs/why.md)"));
            }
        },
        None => Explain::Off,
    };
    // Nsight Systems and the harnesses collect no counters: `explain` on such a target itself is
    // refused above (`spec::kinds`); one inherited from `defaults:` applies to the others only.
    let explain = if !profiler.explains() {
        Explain::Off
    } else {
        explain
    };
    Ok(explain)
}

/// `kernels: each | sum`; with `sum`, every metric must add up over kernels (docs/spec.md,
/// "Operation rows"): one that does not is refused at its key.
pub(super) fn kernel_mode(
    ctx: &Ctx<'_>,
    node: Option<&Node>,
    metrics: Option<&Node>,
    what: &str,
) -> Result<KernelMode> {
    let Some(node) = node else {
        return Ok(KernelMode::Each);
    };
    let mode = match ctx.choice(node, &format!("`kernels` of {what}"), &["each", "sum"])? {
        "sum" => KernelMode::Sum,
        _ => KernelMode::Each,
    };
    if mode == KernelMode::Sum
        && let Some(metrics) = metrics
    {
        for (name, key_node, _) in ctx.entries(metrics, &format!("`metrics` of {what}"))? {
            if let Some(why) = crate::spec::model::not_summable(name) {
                return Err(ctx
                    .err(key_node, format!("`{name}` cannot be summed over the kernels of an operation row (`kernels: sum` on {what}): it is {why}"))
                    .help("gate it on a target with `kernels: each` (a row per kernel), or remove it; `kernels: sum` takes times and `.sum` counters"));
            }
        }
    }
    Ok(mode)
}

/// Refuse a repetition count above [`MAX_REPETITIONS`]: `repetitions: 4000000000` validated, and
/// a replay then looked for that many repetition files for 21 minutes.
pub(super) fn repetitions_cap(ctx: &Ctx<'_>, n: &Node, key: &str, what: &str, r: u32) -> Result<()> {
    if r <= MAX_REPETITIONS {
        return Ok(());
    }
    Err(ctx
        .err(
            n,
            format!("`{key}` of {what} is {r}; at most {MAX_REPETITIONS} are allowed"),
        )
        .help(
            "each repetition is one profiled run of the program per size; 10 is the default (docs/spec.md)",
        ))
}

/// `sass:` of a target: the file, or list of files, whose SASS the cache hashes instead of the
/// executable and the libraries it names (docs/sass-cache.md); relative to the spec.
pub(super) fn sass_paths(ctx: &Ctx<'_>, node: &Node, what: &str, spec_dir: &Path) -> Result<Vec<PathBuf>> {
    let items: Vec<&Node> = match &node.kind {
        Kind::Seq(items) if !items.is_empty() => items.iter().collect(),
        Kind::Scalar(_) => vec![node],
        _ => {
            return Err(ctx
                .err(node, format!("`sass` of {what} must be a path or a non-empty list of paths, found {}", describe(node)))
                .help("name the executable or shared libraries that hold the target's kernels, e.g. `sass: [build/libkernels.so]`"));
        }
    };
    items
        .into_iter()
        .map(|n| {
            let p = PathBuf::from(ctx.non_empty_text(n, &format!("a `sass` path of {what}"))?);
            Ok(if p.is_absolute() { p } else { spec_dir.join(p) })
        })
        .collect()
}

/// A key of the target itself that its profiler does not read is an error (it would be ignored
/// silently); the same key in `defaults:` is for the other targets of a mixed spec.
pub(super) fn other_profilers_keys(
    ctx: &Ctx<'_>,
    m: &Merged<'_, '_>,
    profiler: ProfilerKind,
    what: &str,
) -> Result<()> {
    let ours = super::super::kinds::rules(profiler).article;
    for key in unread_keys(profiler) {
        if let Some(node) = m.own.key_node(key) {
            return Err(ctx
                .err(node, {
                    let (who, also) = readers(key);
                    format!(
                        "`{key}` of {what} only applies to {who} targets, and this is {ours} target{also}"
                    )
                })
                .help(other_profiler_help(key, profiler)));
        }
    }
    if !profiler.is_nsight_compute()
        && let Some(node) = m.own.get("clocks")
        && matches!(&node.kind, Kind::Scalar(s) if s.text == "ncu")
    {
        return Err(ctx
            .err(
                node,
                format!("`clocks: ncu` of {what}: ncu locks the clocks, and this is {ours} target"),
            )
            .help(format!("{} does not lock clocks; use `clocks: nvml-base` (cgp-gate locks them through NVML) or `clocks: none`", profiler.as_str())));
    }
    Ok(())
}
