//! `cgp-gate.yaml` -> [`Spec`]: decoding, defaults and every cross-field check.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::gpu::fingerprint::Fingerprint;

use super::categories::CategoryRules;
use super::decode::{Ctx, Fields, Result, describe, did_you_mean, list};
use super::error::SpecError;
use super::expr::Expr;
use super::model::{
    CacheControl, ClockControl, ClockSetting, Explain, KernelFilter, KernelMode, MetricSpec, ProfilerKind,
    Profiling, ReplayMode, SPEC_VERSION, Settings, Size, Spec, Target,
};
use super::template;
use super::threshold;
use super::yaml::{self, Kind, Mark, Node, Typed};

const TOP_KEYS: &[&str] = &["version", "settings", "defaults", "targets"];
const SETTINGS_KEYS: &[&str] = &[
    "alpha",
    "confidence",
    "history",
    "fingerprint_fields",
    "min_clock_fraction",
    "max_throttle_reruns",
];
/// Every key a target may have; `defaults:` takes all but `name`.
pub(crate) const TARGET_KEYS: &[&str] = &[
    "name",
    "command",
    "cwd",
    "env",
    "kernel",
    "nvtx",
    "launch_skip",
    "launch_count",
    "sizes",
    "metrics",
    "repetitions",
    "max_repetitions",
    "baseline_repetitions",
    "warmup",
    "timeout",
    "clock_control",
    "cache_control",
    "replay_mode",
    "clocks",
    "flops",
    "bytes",
    "profiler",
    "categories",
    "allow_missing",
    "explain",
    "sass",
    "kernels",
];

/// Keys only Nsight Compute reads: on a `profiler: nsys` target they would change nothing.
pub(crate) const NCU_ONLY_KEYS: &[&str] = &[
    "explain",
    "kernels",
    "kernel",
    "nvtx",
    "launch_skip",
    "launch_count",
    "clock_control",
    "cache_control",
    "replay_mode",
    "flops",
    "bytes",
];
/// Keys only `profiler: nsys` targets read.
pub(crate) const NSYS_ONLY_KEYS: &[&str] = &["categories"];

pub(crate) const DEFAULT_REPETITIONS: u32 = 10;
/// Launches of each kernel a run drops at its start (`warmup:`).
pub(crate) const DEFAULT_WARMUP: u32 = 1;
/// Repetitions `baseline update` stores by default (at least `repetitions`): paid once per merge,
/// shared by every pull request, and what gives the tests their power (docs/statistics.md).
pub(crate) const DEFAULT_BASELINE_REPETITIONS: u32 = 50;
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest target name and size key (`m=1024,n=512`), in bytes: both become file or folder names
/// (`<target>.json`, `<recording>/<target>/<size>/`), and file systems allow 255 bytes.
const MAX_NAME_BYTES: usize = 200;
/// A matrix can multiply out to a lot of sizes; past this many, a typo is more likely than intent.
/// The list form has the same cap.
pub(crate) const MAX_SIZES: usize = 10_000;
/// Most metrics a target may judge (docs/spec.md): each is a row per size and kernel.
pub(crate) const MAX_METRICS: usize = 1_000;
/// Most rows a spec may ask for, over all targets: sizes x metrics, summed (docs/spec.md). Past
/// it, the reports and the statistics of one run would be unreadable, and a typo more likely.
pub(crate) const MAX_SPEC_ROWS: usize = 100_000;
/// Most `repetitions`, `max_repetitions` and `baseline_repetitions` (docs/spec.md): each is one
/// profiled run of the program per size, so 1,000 is hours on a GPU already.
pub(crate) const MAX_REPETITIONS: u32 = 1_000;

/// Load and validate a spec file.
///
/// # Errors
/// A [`SpecError`] naming the file, and the line and column where the YAML has them.
pub fn load(path: &Path) -> std::result::Result<Spec, SpecError> {
    use crate::foundation::fsutil::{ReadError, limits, read_text};
    let text = read_text(path, limits::SPEC).map_err(|e| match e {
        ReadError::Io(e) => SpecError::new(path, format!("cannot read the spec: {e}"))
            .help("pass the spec file with `--spec PATH`"),
        ReadError::NotUtf8 { line, column, byte } => SpecError::new(
            path,
            format!("the spec is not UTF-8 text: byte 0x{byte:02x} cannot start a character here"),
        )
        .at(line, column)
        .help("save the file as UTF-8"),
        other => SpecError::new(path, other.message("spec")).help("pass the spec file with `--spec PATH`"),
    })?;
    load_str(&text, path)
}

/// Validate spec text as if it had been read from `path` (relative `cwd`s resolve against
/// `path`'s directory; errors name `path`).
///
/// # Errors
/// As [`load`].
pub fn load_str(text: &str, path: &Path) -> std::result::Result<Spec, SpecError> {
    let deferred = std::cell::RefCell::new(Vec::new());
    let ctx = Ctx {
        path,
        deferred: Some(&deferred),
    };
    let root = yaml::parse(text)
        .map_err(|e| ctx.err_at(e.mark, e.message))?
        .ok_or_else(|| {
            SpecError::new(path, "the spec is empty").help("start with `version: 1` and a `targets:` list")
        })?;
    let spec_dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
    check_version(&ctx, &root)?;
    let top = ctx.fields(&root, "the spec", TOP_KEYS)?;
    let settings = match top.get("settings") {
        Some(n) => settings(&ctx, n)?,
        None => Settings::default(),
    };
    let defaults = match top.get("defaults") {
        Some(n) => Some(defaults(&ctx, n)?),
        None => None,
    };
    let Some(targets_node) = top.get("targets") else {
        return Err(ctx
            .err(&root, "the spec has no `targets:`")
            .help("add a `targets:` list with at least one target (`name`, `command`, `metrics`)"));
    };
    let items = ctx.seq(targets_node, "`targets`")?;
    if items.is_empty() {
        return Err(ctx
            .err(targets_node, "`targets` is empty")
            .help("add at least one target (`name`, `command`, `metrics`)"));
    }
    let mut targets: Vec<Target> = Vec::with_capacity(items.len());
    // Target name -> the line it is first named on (a hash lookup: linear in the targets).
    let mut first_lines: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(items.len());
    let mut rows = 0usize;
    for (i, item) in items.iter().enumerate() {
        let own = ctx.fields(item, &format!("`targets[{i}]`"), TARGET_KEYS)?;
        let name_node = own.get("name").ok_or_else(|| {
            ctx.err(item, format!("`targets[{i}]` has no `name`"))
                .help("every target needs a unique `name`")
        })?;
        let name = target_name(&ctx, name_node)?;
        if let Some(line) = first_lines.get(name) {
            return Err(ctx
                .err(name_node, format!("duplicate target name `{name}`"))
                .help(format!(
                    "`{name}` is already the name of the target on line {line}; target names must be unique"
                )));
        }
        first_lines.insert(name.to_owned(), name_node.mark.line);
        let merged = Merged {
            own: &own,
            defaults: defaults.as_ref(),
        };
        // Each target's errors are kept and the others still read: one run reports them all.
        let Some(t) = ctx.keep(target(&ctx, name, item, &merged, &spec_dir))? else {
            continue;
        };
        rows = rows.saturating_add(t.sizes.len().saturating_mul(t.metrics.len()));
        if rows > MAX_SPEC_ROWS {
            return Err(ctx
                .err(
                    name_node,
                    format!(
                        "with target `{name}` the spec asks for more than {MAX_SPEC_ROWS} rows \
                         (sizes x metrics, summed over the targets so far: {rows})"
                    ),
                )
                .help("gate the sizes and metrics that matter, or split the spec into several (one per workflow job)"));
        }
        targets.push(t);
    }
    super::error::collected(deferred.take())?;
    if let Some(d) = &defaults {
        unused_defaults(&ctx, d, &targets)?;
    }
    Ok(Spec {
        path: path.to_path_buf(),
        hash: hex_sha256(text.as_bytes()),
        settings,
        targets,
    })
}

fn hex_sha256(bytes: &[u8]) -> String {
    crate::foundation::units::hex(&Sha256::digest(bytes))
}

/// The version is checked before anything else: a newer spec may use keys this build does not
/// know, and "unsupported version" is the useful message then.
fn check_version(ctx: &Ctx<'_>, root: &Node) -> Result<()> {
    let Kind::Map(entries) = &root.kind else {
        return Err(ctx
            .err(
                root,
                format!("the spec must be a mapping, found {}", describe(root)),
            )
            .help("start with `version: 1` and a `targets:` list"));
    };
    let version = entries.iter().find(|(k, _)| match &k.kind {
        Kind::Scalar(s) => s.text == "version",
        _ => false,
    });
    let Some((_, v)) = version else {
        return Err(ctx
            .err(root, "the spec has no `version`")
            .help(format!("add `version: {SPEC_VERSION}` as the first line")));
    };
    match &v.kind {
        Kind::Scalar(s) if s.typed() == Typed::Int(i128::from(SPEC_VERSION)) => Ok(()),
        Kind::Scalar(s) if matches!(s.typed(), Typed::Int(_)) => Err(ctx
            .err(v, format!("unsupported spec version {}", s.text))
            .help(format!(
                "this build of cgp-gate reads version {SPEC_VERSION} only; upgrade cgp-gate or write `version: {SPEC_VERSION}`"
            ))),
        _ => Err(ctx
            .err(v, format!("`version` must be the number {SPEC_VERSION}, found {}", describe(v)))
            .help(format!("write `version: {SPEC_VERSION}`"))),
    }
}

fn settings(ctx: &Ctx<'_>, node: &Node) -> Result<Settings> {
    let f = ctx.fields(node, "`settings`", SETTINGS_KEYS)?;
    let mut s = Settings::default();
    let fraction = |key: &str, lo_inclusive: bool, hi_inclusive: bool| -> Result<Option<f64>> {
        let Some(n) = f.get(key) else { return Ok(None) };
        let v = ctx.number(n, &format!("`settings.{key}`"))?;
        let lo_ok = if lo_inclusive { v >= 0.0 } else { v > 0.0 };
        let hi_ok = if hi_inclusive { v <= 1.0 } else { v < 1.0 };
        if !(lo_ok && hi_ok) {
            let range = format!(
                "{}0, 1{}",
                if lo_inclusive { "[" } else { "(" },
                if hi_inclusive { "]" } else { ")" }
            );
            return Err(ctx.err(n, format!("`settings.{key}` must be in {range}, found {v}")));
        }
        Ok(Some(v))
    };
    if let Some(v) = fraction("alpha", false, false)? {
        s.alpha = v;
    }
    if let Some(v) = fraction("confidence", false, false)? {
        s.confidence = v;
    }
    if let Some(v) = fraction("min_clock_fraction", false, true)? {
        s.min_clock_fraction = v;
    }
    if let Some(n) = f.get("history") {
        s.history = ctx.uint(n, "`settings.history`")?;
        if s.history == 0 {
            return Err(ctx
                .err(n, "`settings.history` must be at least 1")
                .help("it counts the baseline generations kept per metric"));
        }
    }
    if let Some(n) = f.get("max_throttle_reruns") {
        s.max_throttle_reruns = ctx.uint(n, "`settings.max_throttle_reruns`")?;
    }
    if let Some(n) = f.get("fingerprint_fields") {
        let known = Fingerprint::default();
        let known: Vec<&str> = known.fields().keys().copied().collect();
        let mut fields = Vec::new();
        for item in ctx.seq(n, "`settings.fingerprint_fields`")? {
            let name = ctx.text(item, "a fingerprint field")?;
            if !known.contains(&name) {
                let guess = did_you_mean(name, &known)
                    .map(|g| format!("did you mean `{g}`? "))
                    .unwrap_or_default();
                return Err(ctx
                    .err(item, format!("unknown fingerprint field `{name}`"))
                    .help(format!("{guess}fields are {}", list(&known))));
            }
            fields.push(name.to_owned());
        }
        s.fingerprint_fields = fields;
    }
    Ok(s)
}

fn defaults<'n>(ctx: &Ctx<'_>, node: &'n Node) -> Result<Fields<'n>> {
    if let Kind::Map(entries) = &node.kind
        && let Some((k, _)) = entries.iter().find(|(k, _)| match &k.kind {
            Kind::Scalar(s) => s.text == "name",
            _ => false,
        })
    {
        return Err(ctx
            .err(k, "`defaults` cannot set `name`")
            .help("each target names itself; `defaults` holds the other target keys"));
    }
    let keys: Vec<&str> = TARGET_KEYS.iter().copied().filter(|k| *k != "name").collect();
    ctx.fields(node, "`defaults`", &keys)
}

/// A target's keys, falling back to `defaults:` key by key (a target's key replaces the
/// default's value whole: maps such as `env` and `metrics` are not merged).
struct Merged<'a, 'n> {
    own: &'a Fields<'n>,
    defaults: Option<&'a Fields<'n>>,
}

impl<'n> Merged<'_, 'n> {
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.own
            .get(key)
            .or_else(|| self.defaults.and_then(|d| d.get(key)))
    }
}

/// Target names become directory and file names (recordings, baselines), so they stay simple.
fn target_name<'n>(ctx: &Ctx<'_>, node: &'n Node) -> Result<&'n str> {
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

#[expect(
    clippy::too_many_lines,
    reason = "one straight pass over the target's keys reads best"
)]
fn target(ctx: &Ctx<'_>, name: &str, item: &Node, m: &Merged<'_, '_>, spec_dir: &Path) -> Result<Target> {
    let what = format!("target `{name}`");

    // Sizes come first: the command's placeholders and the expressions are checked against them.
    let sizes = sizes(ctx, m.get("sizes"), &what)?;
    for (size, mark) in &sizes {
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

    let Some(command_node) = m.get("command") else {
        return Err(ctx
            .err(item, format!("{what} has no `command`"))
            .help("add the program to run as a list, e.g. `command: [./build/bench, --n, \"{n}\"]`"));
    };
    let command = command(ctx, command_node, &what, &sizes)?;

    let cwd = match m.get("cwd") {
        Some(n) => {
            let p = PathBuf::from(ctx.non_empty_text(n, &format!("`cwd` of {what}"))?);
            Some(if p.is_absolute() { p } else { spec_dir.join(p) })
        }
        None => None,
    };

    let env = match m.get("env") {
        Some(n) => env(ctx, n, &what)?,
        None => BTreeMap::new(),
    };

    let kernel = match m.get("kernel") {
        Some(n) => Some(kernel(ctx, n, &what)?),
        None => None,
    };

    let nvtx = match m.get("nvtx") {
        Some(n) => nvtx(ctx, n, &what)?,
        None => Vec::new(),
    };

    let launch_skip = match m.get("launch_skip") {
        Some(n) => Some(ctx.uint(n, &format!("`launch_skip` of {what}"))?),
        None => None,
    };
    let launch_count = match m.get("launch_count") {
        Some(n) => {
            let c: u64 = ctx.uint(n, &format!("`launch_count` of {what}"))?;
            if c == 0 {
                return Err(ctx
                    .err(n, format!("`launch_count` of {what} must be at least 1"))
                    .help("omit it to profile every matching launch"));
            }
            Some(c)
        }
        None => None,
    };

    let flops = work_expr(ctx, m.get("flops"), "flops", &what, &sizes)?;
    let bytes = work_expr(ctx, m.get("bytes"), "bytes", &what, &sizes)?;

    let profiler = match m.get("profiler") {
        Some(n) => match ctx.choice(n, &format!("`profiler` of {what}"), &["ncu", "nsys"])? {
            "nsys" => ProfilerKind::Nsys,
            _ => ProfilerKind::Ncu,
        },
        None => ProfilerKind::Ncu,
    };
    other_profilers_keys(ctx, m, profiler, &what)?;
    let categories = match m.get("categories") {
        // A `categories` of `defaults:` is for the nsys targets of a mixed spec.
        Some(_) if profiler != ProfilerKind::Nsys => None,
        Some(n) => Some(categories(ctx, n, &what, spec_dir)?),
        None => None,
    };

    let metrics = if profiler == ProfilerKind::Nsys {
        nsys_metrics(ctx, m.get("metrics"), item, &what, categories.as_ref())?
    } else {
        metrics(
            ctx,
            m.get("metrics"),
            item,
            &what,
            flops.is_some(),
            bytes.is_some(),
        )?
    };

    let repetitions = match m.get("repetitions") {
        Some(n) => {
            let r: u32 = ctx.uint(n, &format!("`repetitions` of {what}"))?;
            repetitions_cap(ctx, n, "repetitions", &what, r)?;
            if r < 1 {
                return Err(ctx
                    .err(
                        n,
                        format!("`repetitions` of {what} must be at least 1, found {r}"),
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
            let r: u32 = ctx.uint(n, &format!("`max_repetitions` of {what}"))?;
            repetitions_cap(ctx, n, "max_repetitions", &what, r)?;
            if r < repetitions {
                return Err(ctx
                    .err(
                        n,
                        format!(
                            "`max_repetitions` of {what} ({r}) is less than `repetitions` ({repetitions})"
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
            let r: u32 = ctx.uint(n, &format!("`baseline_repetitions` of {what}"))?;
            repetitions_cap(ctx, n, "baseline_repetitions", &what, r)?;
            if r < repetitions {
                return Err(ctx
                    .err(
                        n,
                        format!(
                            "`baseline_repetitions` of {what} ({r}) is less than `repetitions` ({repetitions})"
                        ),
                    )
                    .help("a baseline is measured once per merge and compared by every check: store at least as many repetitions as a check takes (default 50)"));
            }
            r
        }
        None => DEFAULT_BASELINE_REPETITIONS.max(repetitions),
    };

    let warmup = match m.get("warmup") {
        Some(n) => ctx.uint(n, &format!("`warmup` of {what}"))?,
        None => DEFAULT_WARMUP,
    };

    let timeout = match m.get("timeout") {
        Some(n) => timeout(ctx, n, &what)?,
        None => DEFAULT_TIMEOUT,
    };

    let cache_control = match m.get("cache_control") {
        Some(n) => match ctx.choice(n, &format!("`cache_control` of {what}"), &["all", "none"])? {
            "all" => CacheControl::All,
            _ => CacheControl::None,
        },
        None => CacheControl::All,
    };
    let replay_mode = match m.get("replay_mode") {
        Some(n) => match ctx.choice(
            n,
            &format!("`replay_mode` of {what}"),
            &["kernel", "application", "range", "app-range"],
        )? {
            "application" => ReplayMode::Application,
            "range" => ReplayMode::Range,
            "app-range" => ReplayMode::AppRange,
            _ => ReplayMode::Kernel,
        },
        None => ReplayMode::Kernel,
    };
    let (clocks, clock_control) = clocks(ctx, m.get("clocks"), m.get("clock_control"), &what)?;

    let allow_missing =
        match m.get("allow_missing") {
            Some(n) => {
                match &n.kind {
                    Kind::Scalar(s) if matches!(s.typed(), Typed::Bool(_)) => s.typed() == Typed::Bool(true),
                    _ => {
                        return Err(ctx
                    .err(
                        n,
                        format!("`allow_missing` of {what} must be `true` or `false`, found {}", describe(n)),
                    )
                    .help("`allow_missing: true` lets baseline rows this run did not measure pass the gate"));
                    }
                }
            }
            None => false,
        };

    let explain = match m.get("explain") {
        Some(n) => match &n.kind {
            Kind::Scalar(s) if s.typed() == Typed::Bool(true) => Explain::Always,
            Kind::Scalar(s) if s.typed() == Typed::Bool(false) => Explain::Off,
            Kind::Scalar(s) if s.typed() == Typed::Str("remeasure") => Explain::Remeasure,
            _ => {
                return Err(ctx
                    .err(n, format!("`explain` of {what} must be `true`, `false` or `remeasure`, found {}", describe(n)))
                    .help("`explain: true` collects the counters that say why a time changed in every run; `remeasure` only in baseline updates and when re-measuring doubtful or changed rows (docs/why.md)"));
            }
        },
        None => Explain::Off,
    };
    // Nsight Systems collects no counters: `explain` on an nsys target itself is refused above
    // (`NCU_ONLY_KEYS`); one inherited from `defaults:` applies to the ncu targets only.
    let explain = if profiler == ProfilerKind::Nsys {
        Explain::Off
    } else {
        explain
    };
    let sass = match m.get("sass") {
        Some(n) => sass_paths(ctx, n, &what, spec_dir)?,
        None => Vec::new(),
    };
    let kernels = kernel_mode(ctx, m.get("kernels"), m.get("metrics"), &what)?;

    Ok(Target {
        name: name.to_owned(),
        command,
        cwd,
        env,
        kernel,
        nvtx,
        launch_skip,
        launch_count,
        sizes: sizes.into_iter().map(|(s, _)| s).collect(),
        metrics,
        repetitions,
        max_repetitions,
        baseline_repetitions,
        warmup,
        timeout,
        profiling: Profiling {
            clock_control,
            cache_control,
            replay_mode,
        },
        clocks,
        flops: flops.map(|(t, _)| t),
        bytes: bytes.map(|(t, _)| t),
        profiler,
        categories,
        allow_missing,
        explain,
        sass,
        kernels,
    })
}

/// `kernels: each | sum`; with `sum`, every metric must add up over kernels (docs/spec.md,
/// "Operation rows"): one that does not is refused at its key.
fn kernel_mode(ctx: &Ctx<'_>, node: Option<&Node>, metrics: Option<&Node>, what: &str) -> Result<KernelMode> {
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
            if let Some(why) = super::model::not_summable(name) {
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
fn repetitions_cap(ctx: &Ctx<'_>, n: &Node, key: &str, what: &str, r: u32) -> Result<()> {
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
fn sass_paths(ctx: &Ctx<'_>, node: &Node, what: &str, spec_dir: &Path) -> Result<Vec<PathBuf>> {
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

/// Why a key does nothing on a target of the other profiler, and what to do instead.
fn other_profiler_help(key: &str, profiler: ProfilerKind) -> &'static str {
    match (profiler, key) {
        (ProfilerKind::Ncu, _) => {
            "`categories` groups the kernels of an Nsight Systems trace; add `profiler: nsys` to the target, or remove `categories`"
        }
        (_, "kernel" | "nvtx" | "launch_skip" | "launch_count") => {
            "nsys traces every kernel of the run; gate one kernel with a `kernel:<regex>` metric, or remove the key"
        }
        (_, "clock_control") => {
            "nsys does not lock clocks; use `clocks: nvml-base` (cgp-gate locks them through NVML) or `clocks: none`, and remove `clock_control`"
        }
        (_, "explain") => {
            "nsys traces timings only, and the why needs Nsight Compute's counters; remove `explain` (docs/why.md)"
        }
        (_, "cache_control" | "replay_mode") => {
            "nsys runs the application once and replays nothing; remove the key"
        }
        _ => {
            "`flops` and `bytes` derive throughput from ncu's kernel duration; nsys targets gate times (`gpu_time`, `category:<name>`, `kernel:<regex>`); remove the key"
        }
    }
}

/// A key of the target itself that its profiler does not read is an error (it would be ignored
/// silently); the same key in `defaults:` is for the other targets of a mixed spec.
fn other_profilers_keys(ctx: &Ctx<'_>, m: &Merged<'_, '_>, profiler: ProfilerKind, what: &str) -> Result<()> {
    let (keys, needs) = match profiler {
        ProfilerKind::Nsys => (NCU_ONLY_KEYS, "Nsight Compute (`profiler: ncu`)"),
        ProfilerKind::Ncu => (NSYS_ONLY_KEYS, "`profiler: nsys`"),
    };
    let ours = match profiler {
        ProfilerKind::Nsys => "a `profiler: nsys`",
        ProfilerKind::Ncu => "an ncu",
    };
    for key in keys {
        if let Some(node) = m.own.key_node(key) {
            return Err(ctx
                .err(
                    node,
                    format!("`{key}` of {what} only applies to {needs} targets, and this is {ours} target"),
                )
                .help(other_profiler_help(key, profiler)));
        }
    }
    if profiler == ProfilerKind::Nsys
        && let Some(node) = m.own.get("clocks")
        && matches!(&node.kind, Kind::Scalar(s) if s.text == "ncu")
    {
        return Err(ctx
            .err(
                node,
                format!("`clocks: ncu` of {what}: ncu locks the clocks, and this is a `profiler: nsys` target"),
            )
            .help("nsys does not lock clocks; use `clocks: nvml-base` (cgp-gate locks them through NVML) or `clocks: none`"));
    }
    Ok(())
}

/// A key of `defaults:` that no target reads (an ncu-only key when every target is an nsys
/// target, `categories` when none is) would be ignored silently: an error.
fn unused_defaults(ctx: &Ctx<'_>, defaults: &Fields<'_>, targets: &[Target]) -> Result<()> {
    for (keys, kind, needs) in [
        (
            NCU_ONLY_KEYS,
            ProfilerKind::Ncu,
            "Nsight Compute (`profiler: ncu`)",
        ),
        (NSYS_ONLY_KEYS, ProfilerKind::Nsys, "`profiler: nsys`"),
    ] {
        if targets.iter().any(|t| t.profiler == kind) {
            continue;
        }
        for key in keys {
            if let Some(node) = defaults.key_node(key) {
                let theirs = if kind == ProfilerKind::Ncu {
                    ProfilerKind::Nsys
                } else {
                    ProfilerKind::Ncu
                };
                return Err(ctx
                    .err(
                        node,
                        format!(
                            "`{key}` in `defaults` only applies to {needs} targets, and the spec has none"
                        ),
                    )
                    .help(other_profiler_help(key, theirs)));
            }
        }
    }
    Ok(())
}

/// `categories:` of an nsys target: an inline mapping, or the path of a shared file (relative
/// to the spec).
fn categories(ctx: &Ctx<'_>, node: &Node, what: &str, spec_dir: &Path) -> Result<CategoryRules> {
    if let Kind::Scalar(_) = node.kind {
        let p = PathBuf::from(ctx.non_empty_text(node, &format!("`categories` of {what}"))?);
        let p = if p.is_absolute() { p } else { spec_dir.join(p) };
        return super::categories::load_categories(&p).map_err(|e| {
            if e.line.is_some() {
                e
            } else {
                ctx.err(node, format!("`categories` of {what}: {}", e.message))
                    .help("give a YAML or JSON file of regex -> category, relative to the spec")
            }
        });
    }
    super::categories::decode(ctx, node, &ctx.path.display().to_string())
}

/// `metrics:` of an nsys target: `gpu_time`, `non_gpu_time`, `category:<name>`,
/// `kernel:<regex>`, and their instance counts, added with an `exact` threshold for every
/// category and kernel metric that does not list its own.
fn nsys_metrics(
    ctx: &Ctx<'_>,
    node: Option<&Node>,
    item: &Node,
    what: &str,
    rules: Option<&CategoryRules>,
) -> Result<Vec<super::model::MetricSpec>> {
    let example = "e.g. `metrics: {gpu_time: \"5%\", category:gemm: \"5%\"}`";
    let Some(node) = node else {
        return Err(ctx
            .err(item, format!("{what} has no `metrics`"))
            .help(format!("{}; {example}", super::categories::NSYS_METRICS_HELP)));
    };
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
    let entries = ctx.entries(node, &format!("`metrics` of {what}"))?;
    if entries.is_empty() {
        return Err(ctx
            .err(node, format!("`metrics` of {what} is empty"))
            .help(format!("{}; {example}", super::categories::NSYS_METRICS_HELP)));
    }
    let known = super::categories::category_names(rules);
    let mut out: Vec<super::model::MetricSpec> = Vec::with_capacity(entries.len() * 2);
    for (name, key_node, value) in &entries {
        let m = super::categories::parse_nsys_metric(name)
            .map_err(|(msg, help)| ctx.err(key_node, format!("{msg} (in {what})")).help(help))?;
        if let super::categories::NsysMetric::Category(c)
        | super::categories::NsysMetric::CategoryInstances(c) = &m
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
        out.push(super::model::MetricSpec {
            name: (*name).to_owned(),
            threshold,
        });
    }
    for (name, _, _) in &entries {
        let counted = format!("{}{name}", super::categories::INSTANCES_PREFIX);
        if (name.starts_with("category:") || name.starts_with("kernel:"))
            && !out.iter().any(|m| m.name == counted)
        {
            out.push(super::model::MetricSpec {
                name: counted,
                threshold: super::model::Threshold {
                    kind: super::model::ThresholdKind::Exact,
                    direction: super::model::Direction::Lower,
                    min_effect: None,
                },
            });
        }
    }
    Ok(out)
}

/// Expanded sizes with where each was written (for errors that name a size).
fn sizes(ctx: &Ctx<'_>, node: Option<&Node>, what: &str) -> Result<Vec<(Size, Mark)>> {
    let Some(node) = node else {
        return Ok(vec![(Size::default(), Mark { line: 1, column: 1 })]);
    };
    let shape_help = "write `sizes:` as a list of parameter maps (`- {n: 1024}`) or as `{matrix: {m: [64, 128], n: [64, 128]}}`; omit it for a target without parameters";
    let out = match &node.kind {
        Kind::Seq(items) => {
            if items.is_empty() {
                return Err(ctx
                    .err(node, format!("`sizes` of {what} is empty"))
                    .help("omit `sizes` for a target without parameters, or list at least one size"));
            }
            if items.len() > MAX_SIZES {
                return Err(ctx
                    .err(
                        node,
                        format!(
                            "`sizes` of {what} lists {} sizes; at most {MAX_SIZES} are allowed",
                            items.len()
                        ),
                    )
                    .help("list the sizes that matter instead"));
            }
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let entries = ctx.entries(item, &format!("a size of {what}"))?;
                if entries.is_empty() {
                    return Err(ctx
                        .err(item, format!("a size of {what} has no parameters"))
                        .help(shape_help));
                }
                let mut params = Vec::with_capacity(entries.len());
                for (k, key_node, v) in entries {
                    param_name(ctx, key_node, k, what)?;
                    params.push((k.to_owned(), param_value(ctx, v, k, what)?));
                }
                out.push((Size { params }, item.mark));
            }
            out
        }
        Kind::Map(_) => {
            let f = ctx.fields(node, &format!("`sizes` of {what}"), &["matrix"])?;
            let Some(matrix) = f.get("matrix") else {
                return Err(ctx
                    .err(node, format!("`sizes` of {what} has no `matrix`"))
                    .help(shape_help));
            };
            let axes = ctx.entries(matrix, &format!("`sizes.matrix` of {what}"))?;
            if axes.is_empty() {
                return Err(ctx
                    .err(matrix, format!("`sizes.matrix` of {what} is empty"))
                    .help("give each parameter a list of values, e.g. `{n: [1024, 4096]}`"));
            }
            let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
            for (k, key_node, v) in axes {
                param_name(ctx, key_node, k, what)?;
                let values = ctx.seq(v, &format!("the values of `{k}` in `sizes.matrix` of {what}"))?;
                if values.is_empty() {
                    return Err(ctx.err(
                        v,
                        format!("parameter `{k}` in `sizes.matrix` of {what} has no values"),
                    ));
                }
                let values = values
                    .iter()
                    .map(|n| param_value(ctx, n, k, what))
                    .collect::<Result<Vec<_>>>()?;
                if combos.len().saturating_mul(values.len()) > MAX_SIZES {
                    return Err(ctx
                        .err(
                            matrix,
                            format!("`sizes.matrix` of {what} expands to more than {MAX_SIZES} sizes"),
                        )
                        .help("list the sizes that matter instead"));
                }
                // Earlier keys vary slowest: the last key cycles fastest, like nested loops in
                // key order.
                combos = combos
                    .into_iter()
                    .flat_map(|prefix| {
                        values.iter().map(move |val| {
                            let mut p = prefix.clone();
                            p.push((k.to_owned(), val.clone()));
                            p
                        })
                    })
                    .collect();
            }
            combos
                .into_iter()
                .map(|params| (Size { params }, matrix.mark))
                .collect()
        }
        Kind::Scalar(_) => {
            return Err(ctx
                .err(
                    node,
                    format!(
                        "`sizes` of {what} must be a list or a mapping, found {}",
                        describe(node)
                    ),
                )
                .help(shape_help));
        }
    };
    // Size key -> where it is first listed: a hash lookup, so checking is linear in the sizes
    // (comparing each with every earlier one took 11 s for 10,000).
    let mut first: std::collections::HashMap<String, Mark> =
        std::collections::HashMap::with_capacity(out.len());
    for (s, mark) in &out {
        if let Some(first) = first.insert(s.key(), *mark) {
            return Err(ctx
                .err_at(*mark, format!("size `{}` of {what} is listed twice", s.key()))
                .help(format!(
                    "the first is on line {}; each size is measured once per run",
                    first.line
                )));
        }
    }
    Ok(out)
}

fn param_name(ctx: &Ctx<'_>, key_node: &Node, name: &str, what: &str) -> Result<()> {
    if template::is_param_name(name) {
        return Ok(());
    }
    Err(ctx
        .err(
            key_node,
            format!("`{name}` in the sizes of {what} is not a parameter name"),
        )
        .help("a parameter name is a letter or `_` followed by letters, digits or `_`"))
}

/// A size value, as written. It becomes part of the size key (`m=64,n=128`), which names a
/// recording directory, so path and key separators are refused.
fn param_value(ctx: &Ctx<'_>, node: &Node, name: &str, what: &str) -> Result<String> {
    let v = ctx.non_empty_text(node, &format!("parameter `{name}` in the sizes of {what}"))?;
    let bad = v
        .chars()
        .find(|c| matches!(c, '/' | '\\' | ',' | '=') || c.is_control());
    if let Some(c) = bad {
        return Err(ctx
            .err(node, format!("the value `{v}` of parameter `{name}` in {what} contains `{}`", c.escape_default()))
            .help("size values name recording directories (`m=64,n=128`), so they cannot contain `/`, `\\`, `,`, `=` or control characters"));
    }
    if v == "." || v == ".." {
        return Err(ctx.err(
            node,
            format!("`{v}` cannot be the value of parameter `{name}` in {what}"),
        ));
    }
    Ok(v.to_owned())
}

fn command(ctx: &Ctx<'_>, node: &Node, what: &str, sizes: &[(Size, Mark)]) -> Result<Vec<String>> {
    let items = match &node.kind {
        Kind::Seq(items) => items,
        Kind::Scalar(s) if s.typed() != Typed::Null => {
            let suggestion: Vec<String> = s
                .text
                .split_whitespace()
                .map(|w| {
                    if w.contains(['{', '}', ':', '#', ',']) {
                        format!("\"{w}\"")
                    } else {
                        w.to_owned()
                    }
                })
                .collect();
            return Err(ctx
                .err(
                    node,
                    format!(
                        "`command` of {what} must be a list of arguments, found {}",
                        describe(node)
                    ),
                )
                .help(format!(
                    "cgp-gate runs no shell; write the argv as a list: `command: [{}]`",
                    suggestion.join(", ")
                )));
        }
        _ => {
            return Err(ctx.err(
                node,
                format!(
                    "`command` of {what} must be a list of arguments, found {}",
                    describe(node)
                ),
            ));
        }
    };
    if items.is_empty() {
        return Err(ctx
            .err(node, format!("`command` of {what} is empty"))
            .help("give the program and its arguments, e.g. `[./build/bench, --n, \"{n}\"]`"));
    }
    let mut argv = Vec::with_capacity(items.len());
    for (i, arg) in items.iter().enumerate() {
        let text = match &arg.kind {
            Kind::Map(entries) => {
                // `- {n}` unquoted is YAML for the mapping `{n: null}`.
                let hint = match entries.as_slice() {
                    [(k, _)] => match &k.kind {
                        Kind::Scalar(s) => format!("quote the placeholder: `\"{{{}}}\"`", s.text),
                        _ => "quote the argument".to_owned(),
                    },
                    _ => "quote the argument".to_owned(),
                };
                return Err(ctx
                    .err(
                        arg,
                        format!(
                            "argument {} of the `command` of {what} is a yaml mapping, not text",
                            i + 1
                        ),
                    )
                    .help(format!("an unquoted `{{...}}` is a yaml mapping; {hint}")));
            }
            _ => ctx.text(arg, &format!("argument {} of the `command` of {what}", i + 1))?,
        };
        if i == 0 && text.trim().is_empty() {
            return Err(ctx.err(arg, format!("the program of {what} is empty")));
        }
        if text.contains('\0') {
            return Err(ctx.err(
                arg,
                format!(
                    "argument {} of the `command` of {what} contains a nul character",
                    i + 1
                ),
            ));
        }
        let pieces =
            template::parse(text).map_err(|e| ctx.err(arg, format!("in the `command` of {what}: {e}")))?;
        for param in template::params(&pieces) {
            if let Some((size, mark)) = sizes.iter().find(|(s, _)| s.get(param).is_none()) {
                let where_ = if size.params.is_empty() {
                    format!("{what} has no `sizes`")
                } else {
                    format!("size `{}` (line {}) has no `{param}`", size.key(), mark.line)
                };
                return Err(ctx
                    .err(
                        arg,
                        format!(
                            "placeholder `{{{param}}}` in the `command` of {what} has no value: {where_}"
                        ),
                    )
                    .help(format!(
                        "add `{param}` to every size, or write `{{{{{param}}}}}` for a literal `{{{param}}}`"
                    )));
            }
        }
        argv.push(text.to_owned());
    }
    Ok(argv)
}

fn env(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (k, key_node, v) in ctx.entries(node, &format!("`env` of {what}"))? {
        let valid = k
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ctx
                .err(
                    key_node,
                    format!("`{k}` in the `env` of {what} is not an environment variable name"),
                )
                .help("use letters, digits and `_`, not starting with a digit"));
        }
        let value = match &v.kind {
            Kind::Scalar(s) if s.typed() == Typed::Null => {
                return Err(ctx
                    .err(
                        key_node,
                        format!("environment variable `{k}` of {what} has no value"),
                    )
                    .help("write `\"\"` for an empty value"));
            }
            _ => ctx.text(v, &format!("the value of environment variable `{k}` of {what}"))?,
        };
        if value.contains('\0') {
            return Err(ctx.err(
                v,
                format!("the value of environment variable `{k}` of {what} contains a nul character"),
            ));
        }
        out.insert(k.to_owned(), value.to_owned());
    }
    Ok(out)
}

fn kernel(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<KernelFilter> {
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

fn nvtx(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<Vec<String>> {
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
fn work_expr<'n>(
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
        expr.eval(size)
            .map_err(|e| ctx.err(node, format!("`{key}` of {what}: {e}")))?;
    }
    Ok(Some((text.to_owned(), node)))
}

fn metrics(
    ctx: &Ctx<'_>,
    node: Option<&Node>,
    item: &Node,
    what: &str,
    has_flops: bool,
    has_bytes: bool,
) -> Result<Vec<super::model::MetricSpec>> {
    let example = "e.g. `metrics: {gpu__time_duration.sum: \"3%\"}`";
    let Some(node) = node else {
        return Err(ctx
            .err(item, format!("{what} has no `metrics`"))
            .help(format!("list the ncu metrics to judge, {example}")));
    };
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
    let entries = ctx.entries(node, &format!("`metrics` of {what}"))?;
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

fn timeout(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<Duration> {
    let help = "write a duration with a unit: `500ms`, `120s`, `5m` or `1h`";
    let text = match &node.kind {
        Kind::Scalar(s) => match s.typed() {
            Typed::Str(t) => t,
            Typed::Int(_) | Typed::Float(_) => {
                return Err(ctx
                    .err(node, format!("`timeout` of {what} has no unit: `{}`", s.text))
                    .help(format!("{help}, e.g. `{}s`", s.text)));
            }
            _ => {
                return Err(ctx
                    .err(
                        node,
                        format!("`timeout` of {what} must be a duration, found {}", describe(node)),
                    )
                    .help(help));
            }
        },
        _ => {
            return Err(ctx
                .err(
                    node,
                    format!("`timeout` of {what} must be a duration, found {}", describe(node)),
                )
                .help(help));
        }
    };
    parse_duration(text).map_err(|e| ctx.err(node, format!("bad `timeout` of {what}: {e}")).help(help))
}

/// `500ms`, `120s`, `1.5s`, `5m`, `1h`.
///
/// Hand-written rather than jiff's or humantime's parser on purpose: the spec accepts exactly one
/// number and one of these four units, and each mistake has its own message (no unit, unknown
/// unit, zero) that names the key at its line and column; those parsers accept more forms (`1h
/// 30m`, ISO 8601 `PT5M`, `5 minutes`) that the spec does not document.
pub(crate) fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` does not start with a number"))?;
    let scale = match unit.trim() {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "" => return Err(format!("`{text}` has no unit")),
        other => return Err(format!("unknown unit `{other}` in `{text}`")),
    };
    let secs = value * scale;
    if secs <= 0.0 {
        return Err(format!("`{text}` is not longer than zero"));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{text}` is too long"))
}

/// `clocks:` and `clock_control:` together: only one party may lock the clocks.
fn clocks(
    ctx: &Ctx<'_>,
    clocks_node: Option<&Node>,
    control_node: Option<&Node>,
    what: &str,
) -> Result<(ClockSetting, ClockControl)> {
    let clocks = match clocks_node {
        None => ClockSetting::Ncu,
        Some(n) => match &n.kind {
            Kind::Map(_) => {
                let f = ctx.fields(n, &format!("`clocks` of {what}"), &["sm_mhz", "mem_mhz"])?;
                let mhz = |key: &str| -> Result<u32> {
                    let Some(v) = f.get(key) else {
                        return Err(ctx
                            .err(n, format!("`clocks` of {what} has no `{key}`"))
                            .help("fixed clocks need both `sm_mhz` and `mem_mhz`, e.g. `{sm_mhz: 1410, mem_mhz: 1215}`"));
                    };
                    let x: u32 = ctx.uint(v, &format!("`clocks.{key}` of {what}"))?;
                    if x == 0 {
                        return Err(ctx.err(v, format!("`clocks.{key}` of {what} must be more than 0")));
                    }
                    Ok(x)
                };
                ClockSetting::Fixed {
                    sm_mhz: mhz("sm_mhz")?,
                    mem_mhz: mhz("mem_mhz")?,
                }
            }
            _ => match ctx
                .choice(
                    n,
                    &format!("`clocks` of {what}"),
                    &["ncu", "nvml-base", "nvml-max", "none"],
                )
                .map_err(|e| e.help("or fixed clocks: `{sm_mhz: 1410, mem_mhz: 1215}`"))?
            {
                "nvml-base" => ClockSetting::NvmlBase,
                "nvml-max" => ClockSetting::NvmlMax,
                "none" => ClockSetting::None,
                _ => ClockSetting::Ncu,
            },
        },
    };
    let control = match control_node {
        Some(n) => Some((
            match ctx.choice(n, &format!("`clock_control` of {what}"), &["base", "none"])? {
                "base" => ClockControl::Base,
                _ => ClockControl::None,
            },
            n,
        )),
        None => None,
    };
    match (clocks, control) {
        (ClockSetting::Ncu, None | Some((ClockControl::Base, _))) => {
            Ok((ClockSetting::Ncu, ClockControl::Base))
        }
        // ncu told not to lock, and nobody else does: that is `clocks: none`.
        (ClockSetting::Ncu, Some((ClockControl::None, _))) => Ok((ClockSetting::None, ClockControl::None)),
        (other, Some((ClockControl::Base, n))) => {
            let name = match other {
                ClockSetting::NvmlBase => "nvml-base",
                ClockSetting::NvmlMax => "nvml-max",
                ClockSetting::None => "none",
                _ => "fixed clocks",
            };
            Err(ctx
                .err(n, format!("`clock_control: base` conflicts with `clocks: {name}` in {what}"))
                .help(if matches!(other, ClockSetting::None) {
                    "`clocks: none` means nobody touches the clocks, so ncu's clock control is `none`; remove `clock_control`, or use `clocks: ncu` to let ncu lock base clocks"
                } else {
                    "cgp-gate locks the clocks through NVML here, and ncu locking them too would override that; remove `clock_control` (it is `none` then), or use `clocks: ncu`"
                }))
        }
        (other, _) => Ok((other, ClockControl::None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("120s"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("0s").unwrap_err().contains("not longer than zero"));
        assert!(parse_duration("5").unwrap_err().contains("no unit"));
        assert!(
            parse_duration("5 days")
                .unwrap_err()
                .contains("unknown unit `days`")
        );
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .contains("does not start with a number")
        );
        assert!(
            parse_duration("99999999999999999999h")
                .unwrap_err()
                .contains("too long")
        );
    }

    fn one_target(extra: &str) -> std::result::Result<Spec, SpecError> {
        load_str(
            &format!(
                "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n{extra}"
            ),
            Path::new("dir/cgp-gate.yaml"),
        )
    }

    #[test]
    fn explain_and_sass_keys() {
        let t = one_target("").unwrap().targets.remove(0);
        assert!(t.explain == Explain::Off && t.sass.is_empty());
        let s = one_target("    explain: true\n    sass: [lib/libk.so, /opt/k.so]\n").unwrap();
        let t = &s.targets[0];
        assert_eq!(t.explain, Explain::Always);
        let r = one_target("    explain: remeasure\n").unwrap();
        assert_eq!(r.targets[0].explain, Explain::Remeasure);
        assert_eq!(
            t.sass,
            [PathBuf::from("dir/lib/libk.so"), PathBuf::from("/opt/k.so")]
        );
        let one = one_target("    sass: build/app\n").unwrap();
        assert_eq!(one.targets[0].sass, [PathBuf::from("dir/build/app")]);
        // `defaults:` applies it to every target.
        let d = load_str(
            "version: 1\ndefaults:\n  explain: true\ntargets:\n  - name: t\n    command: [./t]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
            Path::new("cgp-gate.yaml"),
        )
        .unwrap();
        assert_eq!(d.targets[0].explain, Explain::Always);

        let e = one_target("    explain: sometimes\n").unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(
            e.to_string()
                .contains("`explain` of target `t` must be `true`, `false` or `remeasure`"),
            "{e}"
        );
        let nsys = load_str(
            "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    profiler: nsys\n    explain: true\n    metrics:\n      gpu_time: \"3%\"\n",
            Path::new("cgp-gate.yaml"),
        )
        .unwrap_err();
        assert!(
            nsys.to_string()
                .contains("`explain` of target `t` only applies to Nsight Compute"),
            "{nsys}"
        );
        let e = one_target("    sass: []\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("`sass` of target `t` must be a path or a non-empty list"),
            "{e}"
        );
        assert!(one_target("    sass: [\"\"]\n").is_err());
    }

    #[test]
    fn hash_is_sha256_hex() {
        assert_eq!(
            hex_sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
